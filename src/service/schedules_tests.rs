use super::*;
use crate::store::Store;
use crate::testing::new_schedule;
use crate::wire::ident::Ident;

#[test]
fn a_due_fire_delivers_to_each_live_target_and_moves_the_due_time_once() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            agents::insert(c, &Ident::new("alice").unwrap(), None, 1)?;
            let id = schedules::insert(
                c,
                &new_schedule(&["alice", "operator", "ghost"], Some(60)),
                1,
            )?;
            assert_eq!(fire_row(c, id, 99, true)?, Fired::NotDue);
            let Fired::Delivered(to) = fire_row(c, id, 100, true)? else {
                panic!("not fired")
            };
            assert_eq!(to.len(), 2);
            // The same due time cannot fire twice.
            assert_eq!(fire_row(c, id, 100, true)?, Fired::NotDue);
            let s = schedules::get(c, id)?.unwrap();
            assert_eq!(s.next_fire_at_unix, 160);
            let ghost = s.targets.iter().find(|t| t.target == "ghost").unwrap();
            assert_eq!(
                ghost.last_result.as_deref(),
                Some("skipped: not a managed agent")
            );
            Ok(())
        })
        .unwrap();
}
