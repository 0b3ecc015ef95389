//! The host.sock client `hivectl` uses: synchronous, one request per
//! connection, a hard time budget.
//!
//! Decision: plain `std` sockets, no tokio. A call is connect, one line out,
//! one line back; a runtime would only add start-up time to every `hivectl`
//! invocation. Rejected alternative: reusing the daemon's async framing code,
//! which would drag the reactor into a command that must start instantly.
//!
//! The budget (5 s, [`DEFAULT_BUDGET`]) covers the whole call: connect
//! (bounded by `SO_SNDTIMEO`, which Linux applies to a blocking `connect` on a
//! Unix socket whose backlog is full), writing the request and reading the
//! answer. A streaming [`Client::subscribe`] applies it up to the ack only.
//!
//! Connect errors are typed by errno because each asks the user for a
//! different fix (start the socket unit, join `hive-admin`, ...); every
//! message names the socket path.

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::socket::{self, AddressFamily, SockFlag, SockType, UnixAddr, sockopt};
use nix::sys::time::{TimeVal, TimeValLike};

use crate::config::ADMIN_GROUP;
use crate::wire::host::{HostRequest, HostResponse, VERSION};

/// How long a call may take in total before the client gives up (the spec's
/// client budget).
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(5);

/// The longest answer line accepted. The daemon's largest answers (roster,
/// approvals) are far below this; the cap keeps a runaway peer from
/// exhausting memory.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// Why a call did not produce a response. Every variant means "the daemon
/// could not be reached or did not answer properly" (hivectl exits 3); they
/// differ in what the user should do, which the message says.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// ENOENT: no socket file. The daemon's socket unit is not started (or
    /// the path is wrong).
    #[error(
        "no socket at {path}: hive-c0re is not running or its socket unit is not started; \
         start it with `systemctl start hive-c0re.socket` (or pass --socket/HIVE_SOCKET if the \
         hive uses another path)"
    )]
    NotRunning { path: PathBuf },
    /// ECONNREFUSED: the file exists but nobody listens on it (a stale socket
    /// left by a daemon that was run by hand, or a stopped socket unit).
    #[error(
        "nobody is listening on {path} (a stale socket file): start the socket unit with \
         `systemctl start hive-c0re.socket`, or restart hive-c0re"
    )]
    Refused { path: PathBuf },
    /// The path exists but is not a socket (a directory, a regular file):
    /// `--socket`/`HIVE_SOCKET` names the wrong thing.
    #[error(
        "{path} is {what}, not a socket: pass the socket file itself with --socket or \
         HIVE_SOCKET (hive-c0re's is host.sock in its runtime directory)"
    )]
    NotASocket { path: PathBuf, what: &'static str },
    /// EACCES/EPERM: the file mode keeps the caller out; only root and the
    /// admin group may connect.
    #[error(
        "permission denied on {path}: only members of the `{group}` group may use it; add your \
         user (`usermod -aG {group} $USER`) and log in again so the new group takes effect",
        group = ADMIN_GROUP
    )]
    PermissionDenied { path: PathBuf },
    /// The budget ran out while connecting, writing or waiting for the answer.
    #[error(
        "hive-c0re did not answer on {path} within {} ms; it may be overloaded or hung \
         (check `systemctl status hive-c0re` and `journalctl -u hive-c0re`)",
        budget.as_millis()
    )]
    Timeout { path: PathBuf, budget: Duration },
    /// The daemon closed the connection without a complete answer line.
    #[error(
        "hive-c0re closed the connection on {path} without answering \
         (see `journalctl -u hive-c0re`)"
    )]
    Closed { path: PathBuf },
    /// The answer is not a host.sock response line (wrong program on the
    /// socket, or a daemon bug).
    #[error("hive-c0re sent something that is not a host.sock response on {path}: {excerpt}")]
    Protocol {
        path: PathBuf,
        /// The start of the offending line, for the message.
        excerpt: String,
        #[source]
        source: serde_json::Error,
    },
    /// The answer line is not UTF-8 or exceeds [`MAX_LINE`].
    #[error("hive-c0re sent an invalid line on {path}: {reason}")]
    BadLine { path: PathBuf, reason: &'static str },
    /// Any other I/O failure; `action` says which step failed.
    #[error("cannot {action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// One answer: the parsed response and the line exactly as the daemon sent
/// it (without the trailing newline), for `--json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub response: HostResponse,
    pub line: String,
}

impl Reply {
    /// True when the daemon speaks a newer protocol than this build: the
    /// caller should warn and carry on.
    pub fn is_newer_than_us(&self) -> bool {
        self.response.version > VERSION
    }
}

/// A host.sock client. Cheap: it holds only the path and the budget.
#[derive(Debug, Clone)]
pub struct Client {
    path: PathBuf,
    budget: Duration,
}

impl Client {
    /// A client of the socket at `path` with the default 5 s budget.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            budget: DEFAULT_BUDGET,
        }
    }

    /// The same client with another total budget per call.
    pub fn with_budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// Send one request and read its one answer line.
    pub fn call(&self, request: &HostRequest) -> Result<Reply, ClientError> {
        let deadline = Instant::now() + self.budget;
        let mut conn = self.open(request, deadline)?;
        match conn.next_line(Some(deadline))? {
            Some(line) => self.parse(line),
            None => Err(ClientError::Closed {
                path: self.path.clone(),
            }),
        }
    }

    /// Send `subscribe_agent_status` and read the ack within the budget.
    /// The returned [`Subscription`] yields the ack first, then one reply per
    /// changed row, with no time limit, until the daemon closes the stream.
    pub fn subscribe(&self) -> Result<Subscription, ClientError> {
        self.stream(&HostRequest::SubscribeAgentStatus)
    }

    /// Send a streaming request (`subscribe_agent_status`, `logs` with
    /// `follow`) and read its ack within the budget; then every line as it
    /// comes, without a time limit.
    pub fn stream(&self, request: &HostRequest) -> Result<Subscription, ClientError> {
        let deadline = Instant::now() + self.budget;
        let mut conn = self.open(request, deadline)?;
        let ack = match conn.next_line(Some(deadline))? {
            Some(line) => self.parse(line)?,
            None => {
                return Err(ClientError::Closed {
                    path: self.path.clone(),
                });
            }
        };
        Ok(Subscription {
            client: self.clone(),
            conn,
            ack: Some(ack),
        })
    }

    /// Connect and write the request line.
    fn open(&self, request: &HostRequest, deadline: Instant) -> Result<Conn, ClientError> {
        let stream = self.connect(deadline)?;
        let mut line = serde_json::to_string(request).map_err(|e| ClientError::Io {
            action: "encode the request for",
            path: self.path.clone(),
            source: io::Error::other(e),
        })?;
        line.push('\n');
        let remaining = self.remaining(deadline)?;
        stream
            .set_write_timeout(Some(remaining))
            .map_err(|e| self.io("configure the connection to", e))?;
        let mut conn = Conn {
            stream,
            buf: Vec::new(),
            path: self.path.clone(),
            budget: self.budget,
        };
        conn.stream
            .write_all(line.as_bytes())
            .map_err(|e| conn.read_error(e, "send the request to"))?;
        Ok(conn)
    }

    /// `connect(2)` with the errno mapped to what the user should do.
    fn connect(&self, deadline: Instant) -> Result<UnixStream, ClientError> {
        let addr = UnixAddr::new(self.path.as_path())
            .map_err(|e| self.io("use the socket path", io::Error::from(e)))?;
        let fd = socket::socket(
            AddressFamily::Unix,
            SockType::Stream,
            SockFlag::SOCK_CLOEXEC,
            None,
        )
        .map_err(|e| self.io("create a socket for", io::Error::from(e)))?;
        // Bounds a connect that blocks on a full backlog (Linux then fails
        // it with EAGAIN). Zero would mean "no limit", hence the minimum.
        let remaining = self.remaining(deadline)?;
        let micros = i64::try_from(remaining.as_micros())
            .unwrap_or(i64::MAX)
            .max(1);
        socket::setsockopt(&fd, sockopt::SendTimeout, &TimeVal::microseconds(micros))
            .map_err(|e| self.io("configure a socket for", io::Error::from(e)))?;
        let path = self.path.clone();
        match socket::connect(fd.as_raw_fd(), &addr) {
            Ok(()) => Ok(UnixStream::from(fd)),
            Err(Errno::ENOENT) => Err(ClientError::NotRunning { path }),
            Err(Errno::ECONNREFUSED | Errno::ENOTDIR) => match not_a_socket(&path) {
                Some(what) => Err(ClientError::NotASocket { path, what }),
                None => Err(ClientError::Refused { path }),
            },
            Err(Errno::EACCES | Errno::EPERM) => Err(ClientError::PermissionDenied { path }),
            Err(Errno::EAGAIN | Errno::ETIMEDOUT | Errno::EINPROGRESS) => {
                Err(ClientError::Timeout {
                    path,
                    budget: self.budget,
                })
            }
            Err(e) => Err(self.io("connect to", io::Error::from(e))),
        }
    }

    fn parse(&self, line: String) -> Result<Reply, ClientError> {
        match serde_json::from_str::<HostResponse>(&line) {
            Ok(response) => Ok(Reply { response, line }),
            Err(source) => Err(ClientError::Protocol {
                path: self.path.clone(),
                excerpt: excerpt(&line),
                source,
            }),
        }
    }

    fn remaining(&self, deadline: Instant) -> Result<Duration, ClientError> {
        remaining(deadline).ok_or_else(|| ClientError::Timeout {
            path: self.path.clone(),
            budget: self.budget,
        })
    }

    fn io(&self, action: &'static str, source: io::Error) -> ClientError {
        ClientError::Io {
            action,
            path: self.path.clone(),
            source,
        }
    }
}

/// The stream of a `subscribe_agent_status` call: the ack, then one reply
/// per changed row. Ends (`None`) when the daemon closes the connection.
#[derive(Debug)]
pub struct Subscription {
    client: Client,
    conn: Conn,
    ack: Option<Reply>,
}

impl Iterator for Subscription {
    type Item = Result<Reply, ClientError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(ack) = self.ack.take() {
            return Some(Ok(ack));
        }
        match self.conn.next_line(None) {
            Ok(Some(line)) => Some(self.client.parse(line)),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// What [`Subscription::next_within`] found.
#[derive(Debug)]
pub enum Next {
    /// One line (boxed: a reply is large, the other variants are empty).
    Line(Box<Reply>),
    /// Nothing arrived in the time given; the stream is still open.
    Quiet,
    /// The daemon closed the stream.
    End,
}

impl Subscription {
    /// The next line, waiting at most `wait` (a partial line is kept for
    /// the next call), so a reader can do something else while the stream
    /// is quiet.
    pub fn next_within(&mut self, wait: Duration) -> Result<Next, ClientError> {
        if let Some(ack) = self.ack.take() {
            return Ok(Next::Line(Box::new(ack)));
        }
        match self.conn.next_line(Some(Instant::now() + wait)) {
            Ok(Some(line)) => self.client.parse(line).map(|r| Next::Line(Box::new(r))),
            Ok(None) => Ok(Next::End),
            Err(ClientError::Timeout { .. }) => Ok(Next::Quiet),
            Err(e) => Err(e),
        }
    }
}

/// A connected stream with its read buffer, so bytes after one line (the
/// next streamed row) are kept for the next read.
#[derive(Debug)]
struct Conn {
    stream: UnixStream,
    buf: Vec<u8>,
    path: PathBuf,
    budget: Duration,
}

impl Conn {
    /// The next `\n`-terminated line without its newline; `None` on a clean
    /// EOF between lines. `deadline: None` waits without limit.
    fn next_line(&mut self, deadline: Option<Instant>) -> Result<Option<String>, ClientError> {
        let mut scanned = 0;
        loop {
            if let Some(pos) = self.buf[scanned..].iter().position(|&b| b == b'\n') {
                let end = scanned + pos;
                let mut line: Vec<u8> = self.buf.drain(..=end).collect();
                line.pop();
                return String::from_utf8(line)
                    .map(Some)
                    .map_err(|_| self.bad_line("the line is not UTF-8"));
            }
            scanned = self.buf.len();
            if self.buf.len() > MAX_LINE {
                return Err(self.bad_line("the line is longer than 16 MiB"));
            }
            let timeout = match deadline {
                Some(deadline) => Some(remaining(deadline).ok_or_else(|| self.timeout())?),
                None => None,
            };
            self.stream
                .set_read_timeout(timeout)
                .map_err(|e| self.io_error("configure the connection to", e))?;
            let mut chunk = [0u8; 8192];
            let n = match self.stream.read(&mut chunk) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.read_error(e, "read the answer from")),
            };
            if n == 0 {
                return if self.buf.is_empty() {
                    Ok(None)
                } else {
                    Err(ClientError::Closed {
                        path: self.path.clone(),
                    })
                };
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Map a read/write error: a timeout is the budget, a reset or broken
    /// pipe is the daemon hanging up.
    fn read_error(&self, e: io::Error, action: &'static str) -> ClientError {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => self.timeout(),
            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset => ClientError::Closed {
                path: self.path.clone(),
            },
            _ => self.io_error(action, e),
        }
    }

    fn timeout(&self) -> ClientError {
        ClientError::Timeout {
            path: self.path.clone(),
            budget: self.budget,
        }
    }

    fn bad_line(&self, reason: &'static str) -> ClientError {
        ClientError::BadLine {
            path: self.path.clone(),
            reason,
        }
    }

    fn io_error(&self, action: &'static str, source: io::Error) -> ClientError {
        ClientError::Io {
            action,
            path: self.path.clone(),
            source,
        }
    }
}

/// What `path` is when it is something other than a socket (connect
/// answers ECONNREFUSED for a directory or a plain file too).
fn not_a_socket(path: &Path) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let kind = std::fs::metadata(path).ok()?.file_type();
    if kind.is_socket() {
        None
    } else if kind.is_dir() {
        Some("a directory")
    } else if kind.is_file() {
        Some("a regular file")
    } else {
        Some("a device or pipe")
    }
}

/// Time left before `deadline`, `None` once it has passed.
fn remaining(deadline: Instant) -> Option<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    (!left.is_zero()).then_some(left)
}

/// The first 200 characters of a line, for error messages.
fn excerpt(line: &str) -> String {
    let mut out: String = line.chars().take(200).collect();
    if out.len() < line.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
