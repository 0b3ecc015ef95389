//! The egress path's processes for integration tests: the egress service
//! on a daemon's runtime directory and an agent's forwarder.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::{BIN, Daemon};

pub const AGENT: &str = env!("CARGO_BIN_EXE_hive-agent");

/// A child process killed when dropped.
pub struct Killed(pub Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The egress service on the daemon's runtime directory, with `env` set.
pub fn egress_service(d: &Daemon, env: &[(&str, String)]) -> Killed {
    let socket = d.dir.path().join("run/egress-dialer.sock");
    let child = Command::new(BIN)
        .args(["egress", "--socket"])
        .arg(&socket)
        .env("RUST_LOG", "warn")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..200 {
        if socket.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Killed(child)
}

/// `hive-agent egress-forward` for agent `name` on a free loopback port;
/// the port.
pub fn forwarder(d: &Daemon, name: &str) -> (Killed, u16) {
    let mut child = Command::new(AGENT)
        .args(["egress-forward", "--listen", "127.0.0.1:0", "--socket"])
        .arg(d.agent_socket(name))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .split("forwarding 127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    (Killed(child), port)
}

/// Send `request` to the proxy at `port` (the forwarder) and read all.
pub fn through(port: u16, request: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}
