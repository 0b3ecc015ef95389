use super::*;

#[test]
fn unit_paths_are_escaped_as_systemd_escapes_them() {
    assert_eq!(
        unit_path("systemd-nspawn@h-alice.service"),
        "/org/freedesktop/systemd1/unit/systemd_2dnspawn_40h_2dalice_2eservice"
    );
    assert_eq!(
        unit_path("container@h-0.service"),
        "/org/freedesktop/systemd1/unit/container_40h_2d0_2eservice"
    );
    assert_eq!(
        unit_path("1a.service"),
        "/org/freedesktop/systemd1/unit/_31a_2eservice"
    );
}

#[test]
fn a_unit_path_maps_back_to_its_name() {
    for name in [
        "systemd-nspawn@h-alice.service",
        "1a.service",
        "dbus.socket",
    ] {
        assert_eq!(unit_name_of_path(&unit_path(name)).as_deref(), Some(name));
    }
    assert_eq!(unit_name_of_path("/org/freedesktop/systemd1/job/4"), None);
    assert_eq!(
        unit_name_of_path("/org/freedesktop/systemd1/unit/a_2"),
        None
    );
}
