use super::*;

/// Two mounts of /proc/self/mountinfo as Linux writes them: an ext4 root
/// with project quota enforced, and a tmpfs.
const MOUNTINFO: &str = "\
25 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,prjquota
26 25 0:23 / /run rw,nosuid,nodev shared:5 - tmpfs tmpfs rw,size=1630404k,mode=755
27 25 259:3 / /var/lib/machines rw,relatime shared:7 - xfs /dev/nvme0n1p3 rw,attr2,inode64,logbufs=8,logbsize=32k,pqnoenforce
28 25 259:4 / /srv rw,relatime shared:8 - ext4 /dev/nvme0n1p4 rw,quota,usrquota
29 25 259:5 / /data rw,relatime shared:9 - xfs /dev/sdb1 rw,attr2,inode64,logbufs=8,logbsize=32k,prjquota
30 25 0:45 / /b rw,relatime shared:10 - btrfs /dev/sdc rw,space_cache=v2,subvolid=5,subvol=/
";

#[test]
fn ext4_and_xfs_mounted_with_prjquota_enforce_a_project_quota() {
    assert_eq!(support_in(MOUNTINFO, (259, 2)), Support::Enforced);
    assert_eq!(support_in(MOUNTINFO, (259, 5)), Support::Enforced);
}

#[test]
fn a_file_system_without_enforced_project_quota_is_unlimited_saying_what_it_lacks() {
    let why = |dev| match support_in(MOUNTINFO, dev) {
        Support::Unlimited(why) => why,
        Support::Enforced => panic!("{dev:?} is not enforced"),
    };
    assert_eq!(why((0, 23)), "tmpfs has no project quota");
    assert_eq!(why((0, 45)), "btrfs has no project quota");
    // Accounting only (XFS's pqnoenforce) holds nobody back.
    assert_eq!(
        why((259, 3)),
        "xfs mounted without prjquota (it must be mounted with -o prjquota)"
    );
    // User quotas are not project quotas.
    assert_eq!(
        why((259, 4)),
        "ext4 mounted without prjquota (it must be made with -O quota,project and mounted \
         with -o prjquota)"
    );
    assert_eq!(
        why((8, 1)),
        "no mount of device 8:1 in /proc/self/mountinfo"
    );
}

#[test]
fn the_probe_finds_the_mount_of_a_real_directory_and_of_a_missing_ones_parent() {
    // Whatever the test machine's file system is, the probe finds its
    // mount (it is never "no mount of device ...").
    let dir = tempfile::tempdir().unwrap();
    for path in [dir.path().to_path_buf(), dir.path().join("agents/alice")] {
        if let Support::Unlimited(why) = probe(&path) {
            assert!(!why.starts_with("no mount of device"), "{why}");
        }
    }
}

#[test]
fn the_block_limit_is_in_kibibytes_rounded_up() {
    let limits = |bytes| DiskLimits { bytes, inodes: 1 };
    assert_eq!(limits(10 << 30).blocks_kib(), 10 << 20);
    assert_eq!(limits(1025).blocks_kib(), 2);
    assert_eq!(limits(1024).blocks_kib(), 1);
}

#[test]
fn the_helper_is_this_binarys_hidden_set_quota_with_the_project_limits_and_directories() {
    let dirs = [
        PathBuf::from("/var/lib/hyperhive/agents/alice"),
        PathBuf::from("/var/lib/machines/h-alice"),
    ];
    let limits = DiskLimits {
        bytes: 10 << 30,
        inodes: 1_000_000,
    };
    assert_eq!(
        helper_argv("/usr/bin/hive-c0re", 0x0008_0000, limits, &dirs),
        [
            "/usr/bin/hive-c0re",
            "set-quota",
            "--project",
            "524288",
            "--bytes",
            "10737418240",
            "--inodes",
            "1000000",
            "--dir",
            "/var/lib/hyperhive/agents/alice",
            "--dir",
            "/var/lib/machines/h-alice",
        ]
    );
    assert_eq!(helper_unit("h-alice"), "hive-c0re-quota-h-alice.service");
}

#[test]
fn the_helpers_unit_writes_only_the_directories_it_sets() {
    let dirs = [PathBuf::from("/var/lib/hyperhive/agents/alice")];
    let props = transient_properties("/x", vec!["/x".into()], "h-alice", &dirs);
    let get = |key: &str| {
        props
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.to_string())
            .unwrap_or_default()
    };
    assert_eq!(get("ProtectSystem"), "\"strict\"");
    assert_eq!(
        get("ReadWritePaths"),
        "[\"/var/lib/hyperhive/agents/alice\"]"
    );
    assert_eq!(get("Type"), "\"oneshot\"");
    assert_eq!(get("PrivateNetwork"), "true");
}

#[test]
fn a_warning_at_start_says_the_agents_are_unlimited_or_will_not_start() {
    // A temporary directory: tmpfs or a disk without prjquota on a test
    // machine; skipped where it does enforce one.
    let dir = tempfile::tempdir().unwrap();
    if probe(dir.path()) == Support::Enforced {
        eprintln!("skipped: the temporary directory has project quota");
        return;
    }
    let said = check_host(dir.path(), false).unwrap();
    assert!(
        said.contains("every agent's disk use is unlimited"),
        "{said}"
    );
    let said = check_host(dir.path(), true).unwrap();
    assert!(said.contains("no agent will start"), "{said}");
}
