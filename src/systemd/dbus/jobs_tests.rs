use super::*;

const NOW: Duration = Duration::from_millis(1);

#[tokio::test]
async fn a_result_that_overtakes_its_caller_is_kept_for_it() {
    let mut jobs = Jobs::default();
    jobs.finished("/job/1", "done");
    let mut w = jobs.watch("/job/1");
    assert_eq!(w.wait(NOW).await, Waited::Removed("done".into()));
}

#[tokio::test]
async fn results_reach_their_own_callers_whatever_the_order() {
    let mut jobs = Jobs::default();
    let mut a = jobs.watch("/job/1");
    let mut b = jobs.watch("/job/2");
    jobs.finished("/job/2", "failed");
    assert_eq!(a.wait(NOW).await, Waited::Pending);
    jobs.finished("/job/1", "done");
    assert_eq!(a.wait(NOW).await, Waited::Removed("done".into()));
    assert_eq!(b.wait(NOW).await, Waited::Removed("failed".into()));
}

#[tokio::test]
async fn a_lost_connection_ends_every_wait() {
    let mut jobs = Jobs::default();
    let mut a = jobs.watch("/job/1");
    jobs.connection_lost();
    assert_eq!(a.wait(NOW).await, Waited::Lost);
}

#[tokio::test]
async fn old_unclaimed_results_fall_out_of_the_ring() {
    let mut jobs = Jobs::default();
    for i in 0..=RECENT {
        jobs.finished(&format!("/job/{i}"), "done");
    }
    assert_eq!(jobs.recent.len(), RECENT);
    assert_eq!(jobs.watch("/job/0").wait(NOW).await, Waited::Pending);
}

#[test]
fn every_failed_result_reads_as_words_and_done_is_success() {
    assert_eq!(failure_outcome("done"), None);
    assert_eq!(failure_outcome("failed").as_deref(), Some("failed"));
    for r in ["timeout", "canceled", "dependency", "skipped"] {
        let words = failure_outcome(r).unwrap();
        assert!(words.len() > r.len(), "{r}: {words}");
    }
    assert_eq!(
        failure_outcome("frobbed").as_deref(),
        Some("ended with systemd job result \"frobbed\"")
    );
}
