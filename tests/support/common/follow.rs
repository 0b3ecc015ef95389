//! `hivectl turns NAME -f` as a child process, its output gathered as it
//! comes, for tests of the live turn.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{Daemon, HIVECTL};

/// A running `hivectl turns NAME -n 3 -f`; killed when dropped.
pub struct Follower {
    child: Child,
    out: Arc<Mutex<String>>,
    err: Arc<Mutex<String>>,
}

fn gather(mut from: Box<dyn Read + Send>) -> Arc<Mutex<String>> {
    let text = Arc::new(Mutex::new(String::new()));
    let to = Arc::clone(&text);
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            to.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    text
}

impl Follower {
    pub fn start(d: &Daemon, name: &str) -> Self {
        let mut child = Command::new(HIVECTL)
            .arg("--socket")
            .arg(d.socket())
            .args(["turns", name, "-n", "3", "-f"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = gather(Box::new(child.stdout.take().unwrap()));
        let err = gather(Box::new(child.stderr.take().unwrap()));
        Self { child, out, err }
    }

    /// What it printed on stdout so far.
    pub fn out(&self) -> String {
        self.out.lock().unwrap().clone()
    }

    /// What it printed on stderr so far.
    pub fn err(&self) -> String {
        self.err.lock().unwrap().clone()
    }

    /// Wait (up to `within`) until stdout holds every one of `all`; the
    /// failure shows what it printed.
    pub fn shows(&self, what: &str, within: Duration, all: &[&str]) {
        let start = Instant::now();
        while !all.iter().all(|w| self.out().contains(w)) {
            assert!(
                start.elapsed() < within,
                "timed out waiting for {what}; hivectl printed:\n{}\nand on stderr:\n{}",
                self.out(),
                self.err()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
