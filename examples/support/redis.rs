//! The benchmarks' Redis peer: a `redis-server` of our own on a Unix socket
//! in a temp dir (AOF with `appendfsync always`, no RDB snapshots), and a
//! minimal RESP2 client, enough for `XADD`/`XREADGROUP`/`XACK`.
//!
//! A hand-written client rather than the `redis` crate: three commands, and
//! the same shape as the broker's client in the benchmark (one connection,
//! one request line written, one answer read), so the two rings differ in
//! the server only.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

/// A running `redis-server`, killed on drop.
pub struct Server {
    child: Child,
    pub socket: PathBuf,
}

impl Server {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `redis-server` with its data in `dir` and its socket at
/// `dir/redis.sock`: every write appended to the AOF and fsynced before the
/// reply (`appendfsync always`), no TCP, no RDB. `None` when it is not
/// installed.
pub fn start(dir: &Path) -> Option<Server> {
    let socket = dir.join("redis.sock");
    let child = Command::new("redis-server")
        .args(["--port", "0", "--unixsocket"])
        .arg(&socket)
        .args(["--unixsocketperm", "700", "--dir"])
        .arg(dir)
        .args([
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--save",
            "",
            "--daemonize",
            "no",
            "--maxclients",
            "4096",
            // Its accept backlog (the Unix socket's too): the benchmark
            // connects 1,000 clients at once.
            "--tcp-backlog",
            "4096",
            "--loglevel",
            "warning",
        ])
        .stdout(Stdio::null())
        .spawn();
    let child = match child {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => panic!("cannot start redis-server: {e}"),
    };
    let server = Server { child, socket };
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::os::unix::net::UnixStream::connect(&server.socket).is_err() {
        assert!(Instant::now() < deadline, "redis-server did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(server)
}

/// One RESP2 value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Value>>),
}

impl Value {
    /// The elements of an array (none for a nil array).
    pub fn items(&self) -> &[Value] {
        match self {
            Value::Array(Some(items)) => items,
            _ => &[],
        }
    }

    /// A bulk string's bytes.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Value::Bulk(Some(b)) => b,
            _ => &[],
        }
    }
}

/// One connection.
pub struct Client {
    read: BufReader<OwnedReadHalf>,
    write: OwnedWriteHalf,
}

impl Client {
    /// Connect, retrying while the accept backlog is full (`EAGAIN` on a
    /// Unix socket).
    pub async fn connect(socket: &Path) -> std::io::Result<Self> {
        let stream = loop {
            match UnixStream::connect(socket).await {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                other => break other?,
            }
        };
        let (read, write) = stream.into_split();
        Ok(Self {
            read: BufReader::new(read),
            write,
        })
    }

    /// Send one command (written in one call) and read its reply.
    pub async fn ask(&mut self, args: &[&[u8]]) -> std::io::Result<Value> {
        let mut replies = self.ask_all(&[args]).await?;
        Ok(replies.remove(0))
    }

    /// Send several commands in one write (pipelined) and read their
    /// replies, in order.
    pub async fn ask_all(&mut self, commands: &[&[&[u8]]]) -> std::io::Result<Vec<Value>> {
        let mut out = Vec::new();
        for args in commands {
            out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
            for a in *args {
                out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
                out.extend_from_slice(a);
                out.extend_from_slice(b"\r\n");
            }
        }
        self.write.write_all(&out).await?;
        let mut replies = Vec::with_capacity(commands.len());
        for _ in commands {
            replies.push(read_value(&mut self.read).await?);
        }
        Ok(replies)
    }
}

fn bad(what: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what)
}

/// One value: the type byte, its line, and what the line announces.
async fn read_value(r: &mut BufReader<OwnedReadHalf>) -> std::io::Result<Value> {
    let mut line = String::new();
    if r.read_line(&mut line).await? == 0 {
        return Err(bad("redis-server closed the connection".into()));
    }
    let line = line.trim_end_matches("\r\n");
    let (kind, rest) = line.split_at(1.min(line.len()));
    let number = || {
        rest.parse::<i64>()
            .map_err(|_| bad(format!("bad RESP line {line:?}")))
    };
    Ok(match kind {
        "+" => Value::Simple(rest.to_owned()),
        "-" => Value::Error(rest.to_owned()),
        ":" => Value::Int(number()?),
        "$" => match usize::try_from(number()?) {
            Err(_) => Value::Bulk(None),
            Ok(len) => {
                let mut buf = vec![0; len + 2];
                r.read_exact(&mut buf).await?;
                buf.truncate(len);
                Value::Bulk(Some(buf))
            }
        },
        "*" => match usize::try_from(number()?) {
            Err(_) => Value::Array(None),
            Ok(n) => {
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(Box::pin(read_value(r)).await?);
                }
                Value::Array(Some(items))
            }
        },
        _ => return Err(bad(format!("bad RESP line {line:?}"))),
    })
}
