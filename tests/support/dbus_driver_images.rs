//! The driver's container files and images against the fake machine1, the
//! nixos profile's builder seam, and connecting to buses without systemd.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[tokio::test]
async fn create_clones_the_template_writes_the_nspawn_file_and_sets_limits() {
    bounded(async {
        let mut st = host(&[]);
        st.units.insert(nspawn("a"), Unit::new(false, "inactive", "dead"));
        let rig = Rig::new(st).await;
        let driver = rig.driver(&[]).await;
        let mut changes = driver.changes();
        let spec = rig.spec("a");
        driver.create(&id("a"), &spec).await.unwrap();

        assert!(rig.fake.has_image("h-a"));
        // What the container needs first, the image (which makes it exist)
        // last: a kill in between leaves no image, not an image that cannot
        // start (issue 32).
        assert_eq!(
            rig.fake.calls(),
            vec![
                format!(
                    "SetUnitProperties {} runtime=false CPUQuotaPerSecUSec=2000000 MemoryMax=4294967296 TasksMax=4096",
                    nspawn("a")
                ),
                "CloneImage hive-template h-a false".to_string(),
            ]
        );
        let file = std::fs::read_to_string(rig.dir.path().join("nspawn/h-a.nspawn")).unwrap();
        let runtime = format!("Bind={}:/run/hive\n", spec.runtime_dir.display());
        assert!(file.contains(&runtime), "{file}");
        assert!(file.contains("Environment=\"HIVE_CAPABILITIES=spawn\"\n"), "{file}");
        assert!(spec.runtime_dir.is_dir() && spec.state_dir.is_dir());
        let change = changes.recv().await.unwrap();
        assert_eq!((change.agent, change.old, change.new), (id("a"), None, Some(UnitState::inactive())));

        // A second create keeps the existing image.
        driver.create(&id("a"), &spec).await.unwrap();
        assert_eq!(rig.fake.calls().iter().filter(|c| c.starts_with("CloneImage")).count(), 1);
        assert_eq!(driver.start(&id("a")).await, Ok(Outcome::Done));
    })
    .await;
}

/// A hive switched to a self-contained image (`bind_host_usr: false`)
/// binds nothing of the host's `/usr` into a new agent, while an agent
/// created before the switch (its image cloned from an empty-`usr/`
/// template) keeps its bind through a rebuild and a start.
#[tokio::test]
async fn an_agent_keeps_the_host_usr_bind_it_was_created_with_after_a_switch_to_an_image() {
    bounded(async {
        let mut st = host(&[]);
        for n in ["old", "new"] {
            st.units
                .insert(nspawn(n), Unit::new(false, "inactive", "dead"));
        }
        let rig = Rig::new(st).await;
        let before = rig.driver(&[]).await;
        before.create(&id("old"), &rig.spec("old")).await.unwrap();
        let mut settings = rig.settings(&["old"]);
        settings.bind_host_usr = false;
        let driver = SystemdDriver::connect(Profile::Nspawn, settings)
            .await
            .unwrap();
        driver.create(&id("new"), &rig.spec("new")).await.unwrap();
        driver.rebuild(&id("old"), &rig.spec("old")).await.unwrap();
        for n in ["old", "new"] {
            assert_eq!(driver.start(&id(n)).await, Ok(Outcome::Done), "{n}");
        }
        let file = |n: &str| {
            std::fs::read_to_string(rig.dir.path().join(format!("nspawn/h-{n}.nspawn"))).unwrap()
        };
        assert!(
            file("old").contains("\nBindReadOnly=/usr\n"),
            "{}",
            file("old")
        );
        assert!(!file("new").contains("/usr"), "{}", file("new"));
        assert!(file("new").contains(":/var/lib/hive\n"), "{}", file("new"));
    })
    .await;
}

/// Issue 48: with a shared image in the store, a new agent binds its
/// current version's `usr` read-only; a full-copy agent made before keeps
/// its own `/usr` until a rebuild moves it; a new version moves nobody
/// until their rebuild, and the old version stays where it was.
#[tokio::test]
async fn agents_bind_the_shared_images_current_version_and_move_at_their_rebuild() {
    bounded(async {
        let mut st = host(&[]);
        for n in ["full", "new"] {
            st.units
                .insert(nspawn(n), Unit::new(false, "inactive", "dead"));
        }
        let rig = Rig::new(st).await;
        let mut settings = rig.settings(&[]);
        settings.bind_host_usr = false;
        let store = settings.agent_images_dir.clone();
        let driver = SystemdDriver::connect(Profile::Nspawn, settings)
            .await
            .unwrap();
        let file = |n: &str| {
            std::fs::read_to_string(rig.dir.path().join(format!("nspawn/h-{n}.nspawn"))).unwrap()
        };
        let publish = |v: &str| {
            std::fs::create_dir_all(store.join(v).join("usr")).unwrap();
            let tmp = store.join(".current.tmp");
            std::os::unix::fs::symlink(v, &tmp).unwrap();
            std::fs::rename(&tmp, store.join("current")).unwrap();
        };
        let binds = |v: &str| {
            format!(
                "\nBindReadOnly={}:/usr\n",
                store.join(v).join("usr").display()
            )
        };
        driver.create(&id("full"), &rig.spec("full")).await.unwrap();
        assert!(!file("full").contains("/usr"), "{}", file("full"));

        publish("v1");
        driver.create(&id("new"), &rig.spec("new")).await.unwrap();
        assert!(file("new").contains(&binds("v1")), "{}", file("new"));
        assert_eq!(driver.start(&id("full")).await, Ok(Outcome::Done));
        assert!(
            !file("full").contains("/usr"),
            "a start moved it: {}",
            file("full")
        );

        publish("v2");
        assert_eq!(driver.start(&id("new")).await, Ok(Outcome::Done));
        assert!(
            file("new").contains(&binds("v1")),
            "a start moved it: {}",
            file("new")
        );
        for n in ["full", "new"] {
            driver.rebuild(&id(n), &rig.spec(n)).await.unwrap();
            assert!(file(n).contains(&binds("v2")), "{}", file(n));
        }
        assert!(store.join("v1/usr").is_dir());
    })
    .await;
}

#[tokio::test]
async fn a_missing_template_image_is_a_setup_error_naming_it() {
    bounded(async {
        let mut st = host(&[]);
        st.images.clear();
        let rig = Rig::new(st).await;
        let driver = rig.driver(&[]).await;
        let err = driver.create(&id("a"), &rig.spec("a")).await.unwrap_err();
        assert!(
            matches!(&err, DriverError::Setup(m) if m.contains("\"hive-template\"")),
            "{err}"
        );
        assert!(!rig.dir.path().join("nspawn/h-a.nspawn").exists());
    })
    .await;
}

#[tokio::test]
async fn a_spec_that_cannot_be_written_is_refused_before_anything_is_cloned() {
    bounded(async {
        let rig = Rig::new(host(&[])).await;
        let driver = rig.driver(&[]).await;
        let mut spec = rig.spec("a");
        spec.memory_max = Some("lots".into());
        let err = driver.create(&id("a"), &spec).await.unwrap_err();
        assert!(err.to_string().contains("\"lots\""), "{err}");
        let mut spec = rig.spec("a");
        spec.env = vec![("X".into(), "line\nbreak".into())];
        assert!(matches!(
            driver.create(&id("a"), &spec).await,
            Err(DriverError::Setup(_))
        ));
        assert!(rig.fake.calls().is_empty(), "{:?}", rig.fake.calls());
    })
    .await;
}

#[tokio::test]
async fn destroy_stops_the_unit_removes_its_file_and_with_purge_its_image() {
    bounded(async {
        let mut st = host(&["keep", "purge"]);
        st.units
            .insert(nspawn("keep"), Unit::new(true, "active", "running"));
        let rig = Rig::new(st).await;
        let driver = rig.driver(&["keep", "purge"]).await;
        for n in ["keep", "purge"] {
            driver.rebuild(&id(n), &rig.spec(n)).await.unwrap();
        }
        let keep_file = rig.dir.path().join("nspawn/h-keep.nspawn");
        assert!(keep_file.exists());

        driver.destroy(&id("keep"), false).await.unwrap();
        assert!(!keep_file.exists());
        assert!(rig.fake.has_image("h-keep"));
        assert_eq!(rig.fake.unit(&nspawn("keep")).active, "inactive");
        assert!(!driver.view().contains_key(&id("keep")));

        driver.destroy(&id("purge"), true).await.unwrap();
        assert!(!rig.fake.has_image("h-purge"));
        assert!(!rig.dir.path().join("nspawn/h-purge.nspawn").exists());
        let calls: BTreeSet<String> = rig.fake.calls().into_iter().collect();
        assert!(
            calls.contains(&format!("RevertUnitFiles {}", nspawn("purge"))),
            "{calls:?}"
        );
        assert!(calls.contains("RemoveImage h-purge"), "{calls:?}");
        assert!(!calls.contains("RemoveImage h-keep"), "{calls:?}");
        assert!(driver.view().is_empty());
    })
    .await;
}

#[tokio::test]
async fn the_view_holds_the_profiles_units_and_known_agents_only() {
    bounded(async {
        let mut st = host(&["a", "known"]);
        st.units
            .insert(nspawn("a"), Unit::new(true, "active", "running"));
        st.units.insert(
            "systemd-nspawn@other.service".into(),
            Unit::new(true, "active", "running"),
        );
        st.units.insert(
            "container@h-b.service".into(),
            Unit::new(true, "active", "running"),
        );
        st.units
            .insert("sshd.service".into(), Unit::new(true, "active", "running"));
        let rig = Rig::new(st).await;
        let driver = rig.driver(&["known"]).await;
        let view = driver.view();
        assert_eq!(view.len(), 2, "{view:?}");
        assert!(view[&id("a")].is_running());
        assert_eq!(view[&id("known")], UnitState::inactive());

        // systemd unloads a stopped known unit: it stays, as inactive; a
        // stray unit that is unloaded leaves the view.
        let mut changes = driver.changes();
        rig.fake
            .set_unit(&nspawn("a"), "inactive", "dead", "success")
            .await;
        rig.fake.unload(&nspawn("a")).await;
        until(&driver, &mut changes, "a", |s| s.is_none()).await;
        assert_eq!(driver.view()[&id("known")], UnitState::inactive());
    })
    .await;
}

#[tokio::test]
async fn a_nixos_container_is_built_through_the_builder_and_runs_as_container_unit() {
    bounded(async {
        let mut st = State::default();
        st.units.insert(
            "container@h-a.service".into(),
            Unit::new(false, "inactive", "dead"),
        );
        let rig = Rig::new(st).await;
        let builder = Arc::new(RecordingBuilder::new("/nix/store"));
        let mut settings = rig.settings(&[]);
        settings.builder = builder.clone();
        let driver = SystemdDriver::connect(Profile::Nixos, settings)
            .await
            .unwrap();

        // Not created yet: no config file, no unit to start.
        assert!(matches!(
            driver.start(&id("a")).await,
            Err(DriverError::NoSuchUnit { .. })
        ));
        driver.create(&id("a"), &rig.spec("a")).await.unwrap();
        assert_eq!(builder.calls(), vec![id("a")]);
        let conf = std::fs::read_to_string(rig.dir.path().join("nixos/h-a.conf")).unwrap();
        assert!(
            conf.contains("SYSTEM_PATH=/nix/store/h-a-system\n"),
            "{conf}"
        );
        assert_eq!(driver.start(&id("a")).await, Ok(Outcome::Done));
        assert!(
            rig.fake
                .calls()
                .contains(&"StartUnit container@h-a.service".to_string())
        );
        assert!(driver.view()[&id("a")].is_running());
    })
    .await;
}

#[tokio::test]
async fn no_bus_at_the_address_is_unavailable() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let address = format!("unix:path={}", dir.path().join("nobus").display());
        let err = SystemdDriver::connect(Profile::Nspawn, settings_at(dir.path(), address))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, DriverError::Unavailable(m) if m.contains("nobus")),
            "{err}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_bus_without_systemd_on_it_is_unavailable() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let bus = PrivateBus::start(dir.path()).await;
        let err = SystemdDriver::connect(Profile::Nspawn, settings_at(dir.path(), bus.address()))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, DriverError::Unavailable(m) if m.contains("systemd is not on")),
            "{err}"
        );
    })
    .await;
}
