//! The accept loop shared by every socket: one task per connection, tracked
//! so shutdown can drain them; accept errors (EMFILE, ...) are logged and
//! retried after a pause instead of ending the listener.

use std::future::Future;
use std::time::Duration;

use tokio::net::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Accept connections until `shutdown` fires, handing each to `handle` in a
/// task of its own on `tasks`.
pub async fn accept_loop<F, Fut>(
    listener: UnixListener,
    label: &'static str,
    shutdown: CancellationToken,
    tasks: TaskTracker,
    handle: F,
) where
    F: Fn(UnixStream) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                tasks.spawn(handle(stream));
            }
            Err(err) => {
                // Out of fds or memory: back off so the loop does not spin,
                // and keep listening.
                tracing::warn!(socket = label, "accept failed: {err}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}
