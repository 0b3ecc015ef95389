use crate::store::agents;
use crate::testing::{config_in, hive_at, id};

async fn manager_events(hive: &super::Hive) -> Vec<String> {
    crate::testing::manager_events(hive, &["needs_login", "logged_in"]).await
}

#[tokio::test]
async fn a_login_change_reaches_the_roster_and_the_manager_once_per_change() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _driver) = hive_at(config_in(dir.path()), 1000);
    let alice = id("alice");
    hive.spawn(&alice).await.unwrap();
    hive.report_session(&alice, Some(true), None).await.unwrap();
    hive.report_session(&alice, Some(true), None).await.unwrap();
    assert_eq!(
        manager_events(&hive).await,
        [r#"{"event":"needs_login","agent":"alice"}"#]
    );
    let record = |h: super::Hive| async move {
        h.store()
            .run(|c| agents::get(c, &id("alice")))
            .await
            .unwrap()
            .unwrap()
    };
    assert!(record(hive.clone()).await.needs_login);
    hive.report_session(&alice, Some(false), Some("claude-opus-4-1".into()))
        .await
        .unwrap();
    assert_eq!(
        manager_events(&hive).await,
        [
            r#"{"event":"needs_login","agent":"alice"}"#,
            r#"{"event":"logged_in","agent":"alice"}"#
        ]
    );
    let r = record(hive.clone()).await;
    assert!(!r.needs_login);
    assert_eq!(r.active_model.as_deref(), Some("claude-opus-4-1"));
    // A model-only report leaves the login as it is.
    hive.report_session(&alice, None, Some("m2".into()))
        .await
        .unwrap();
    assert!(!record(hive.clone()).await.needs_login);
    assert_eq!(manager_events(&hive).await.len(), 2);
}

#[tokio::test]
async fn a_report_for_an_unmanaged_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _driver) = hive_at(config_in(dir.path()), 1000);
    let err = hive
        .report_session(&id("ghost"), Some(true), None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("ghost"), "{err}");
}
