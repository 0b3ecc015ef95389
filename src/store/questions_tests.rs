use super::*;
use crate::store::Store;

#[test]
fn a_question_closes_once_and_keeps_its_first_answer() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            let new = NewQuestion {
                asker: "alice".into(),
                target: None,
                question: "ship it?".into(),
                options: vec!["yes".into(), "no".into()],
                multi: false,
                expires_at: Some(50),
            };
            let id = insert(c, &new, 10)?;
            assert_eq!(expired(c, 49)?.len(), 0);
            assert_eq!(expired(c, 50)?.len(), 1);
            assert!(close(c, id, "yes", "operator", 20)?);
            assert!(!close(c, id, "no", "operator", 21)?);
            let row = get(c, id)?.unwrap();
            assert_eq!(row.options, vec!["yes".to_owned(), "no".to_owned()]);
            assert_eq!(
                (row.answer.as_deref(), row.answered_at),
                (Some("yes"), Some(20))
            );
            assert!(open(c)?.is_empty());
            Ok(())
        })
        .unwrap();
}
