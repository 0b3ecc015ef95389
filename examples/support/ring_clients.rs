//! The ring's clients, one per server (the daemon's agent socket, Redis
//! Streams), behind one trait, and what an agent's rounds came to.

use std::path::Path;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::net::unix::OwnedWriteHalf;

use super::redis;

/// One agent's side of the ring, whatever the server: send to the next,
/// wait for (at least) one message, ack what was read.
pub trait RingClient {
    /// Send one message to `next`.
    async fn send(&mut self, next: &str, body: &str);
    /// Long-poll the own inbox; how many messages came.
    async fn recv(&mut self) -> usize;
    /// Ack what the last `recv` read.
    async fn ack(&mut self);
    /// The ack and the next long poll written at once (pipelined), their
    /// answers read in order; how many messages came.
    async fn ack_and_recv(&mut self) -> usize;
}

const RECV: &str = r#"{"cmd":"recv","wait_seconds":30,"max":10}"#;
const ACK: &str = r#"{"cmd":"ack_turn"}"#;
const ACKED: &str = r#"{"kind":"ok"}"#;

/// How many messages a `recv` answer holds.
fn received(answer: &str) -> usize {
    let v: serde_json::Value = serde_json::from_str(answer).unwrap();
    v["messages"].as_array().map_or(0, Vec::len)
}

/// A JSON-lines connection to an agent's `mcp.sock`.
pub struct Broker {
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::net::unix::OwnedReadHalf>>,
    write: OwnedWriteHalf,
}

impl Broker {
    pub async fn connect(socket: &Path) -> Self {
        let (read, write) = tokio::net::UnixStream::connect(socket)
            .await
            .unwrap()
            .into_split();
        Self {
            lines: tokio::io::BufReader::new(read).lines(),
            write,
        }
    }

    async fn ask(&mut self, line: &str) -> String {
        self.ask_all(&[line]).await.remove(0)
    }

    /// Write `lines` at once, read their answers in order.
    async fn ask_all(&mut self, lines: &[&str]) -> Vec<String> {
        let out: String = lines.iter().map(|l| format!("{l}\n")).collect();
        self.write.write_all(out.as_bytes()).await.unwrap();
        let mut answers = Vec::with_capacity(lines.len());
        for _ in lines {
            let line = self.lines.next_line().await.unwrap();
            answers.push(line.expect("the daemon answered"));
        }
        answers
    }
}

impl RingClient for Broker {
    async fn send(&mut self, next: &str, body: &str) {
        let sent = self
            .ask(&format!(
                r#"{{"cmd":"send","to":"{next}","body":"{body}"}}"#
            ))
            .await;
        assert_eq!(sent, r#"{"kind":"ok","delivered":1}"#);
    }

    async fn recv(&mut self) -> usize {
        received(&self.ask(RECV).await)
    }

    async fn ack(&mut self) {
        assert_eq!(self.ask(ACK).await, ACKED);
    }

    async fn ack_and_recv(&mut self) -> usize {
        let [acked, got] = <[String; 2]>::try_from(self.ask_all(&[ACK, RECV]).await).unwrap();
        assert_eq!(acked, ACKED);
        received(&got)
    }
}

/// A connection to Redis acting as agent `me`: its inbox is the stream
/// `me`, read through the consumer group `g`.
pub struct Streams {
    pub client: redis::Client,
    pub me: String,
    pub read: Vec<Vec<u8>>,
}

/// `XREADGROUP` of up to 10 new entries of `me`'s stream, blocking.
fn read_args(me: &str) -> [&[u8]; 11] {
    let me = me.as_bytes();
    [
        b"XREADGROUP",
        b"GROUP",
        b"g",
        me,
        b"COUNT",
        b"10",
        b"BLOCK",
        b"30000",
        b"STREAMS",
        me,
        b">",
    ]
}

/// `XACK` of the ids `read` from `me`'s stream.
fn ack_args<'a>(me: &'a str, read: &'a [Vec<u8>]) -> Vec<&'a [u8]> {
    let mut args: Vec<&[u8]> = vec![b"XACK", me.as_bytes(), b"g"];
    args.extend(read.iter().map(Vec::as_slice));
    args
}

impl Streams {
    /// Keep the ids an `XREADGROUP` reply read; how many.
    fn took(&mut self, got: &redis::Value) -> usize {
        // [[stream, [[id, [field, value]], ...]]], or nil on timeout.
        self.read = got
            .items()
            .iter()
            .flat_map(|stream| stream.items().get(1).map_or(&[][..], |e| e.items()))
            .map(|entry| entry.items()[0].bytes().to_vec())
            .collect();
        self.read.len()
    }

    fn assert_acked(&self, acked: &redis::Value) {
        assert_eq!(*acked, redis::Value::Int(self.read.len() as i64));
    }
}

impl RingClient for Streams {
    async fn send(&mut self, next: &str, body: &str) {
        let id = self
            .client
            .ask(&[b"XADD", next.as_bytes(), b"*", b"body", body.as_bytes()])
            .await
            .unwrap();
        assert!(matches!(id, redis::Value::Bulk(Some(_))), "XADD: {id:?}");
    }

    async fn recv(&mut self) -> usize {
        let got = self.client.ask(&read_args(&self.me)).await.unwrap();
        self.took(&got)
    }

    async fn ack(&mut self) {
        let acked = self
            .client
            .ask(&ack_args(&self.me, &self.read))
            .await
            .unwrap();
        self.assert_acked(&acked);
    }

    async fn ack_and_recv(&mut self) -> usize {
        let (ack, read) = (ack_args(&self.me, &self.read), read_args(&self.me));
        let replies = self.client.ask_all(&[&ack, &read]).await.unwrap();
        let [acked, got] = <[redis::Value; 2]>::try_from(replies).unwrap();
        self.assert_acked(&acked);
        self.took(&got)
    }
}

/// What one agent's rounds, or a whole ring's, came to.
#[derive(Default)]
pub struct Tally {
    pub received: usize,
    pub answered: usize,
    /// The time spent waiting for answers to `send`, `recv` and `ack`
    /// (a `recv`'s includes waiting for the message), summed over how many
    /// of each were asked.
    waited: [(Duration, u32); 3],
}

impl Tally {
    pub fn add(&mut self, other: &Tally) {
        self.received += other.received;
        self.answered += other.answered;
        for (w, o) in self.waited.iter_mut().zip(other.waited) {
            (w.0, w.1) = (w.0 + o.0, w.1 + o.1);
        }
    }

    /// The mean wait for each answer (send, recv, ack), µs.
    pub fn mean_waits(&self) -> [f64; 3] {
        self.waited
            .map(|(sum, n)| sum.as_secs_f64() * 1e6 / f64::from(n.max(1)))
    }

    /// Time one request of kind `k` (0 send, 1 recv, 2 ack).
    async fn time<T>(&mut self, k: usize, request: impl std::future::Future<Output = T>) -> T {
        let asked = Instant::now();
        let answer = request.await;
        self.waited[k].0 += asked.elapsed();
        self.waited[k].1 += 1;
        self.answered += 1;
        answer
    }
}

/// `rounds` rounds of the ring for one agent. `pipelined`: each ack is
/// written with the next long poll ([`RingClient::ack_and_recv`], timed as
/// a `recv`) instead of on its own, the last one after the rounds.
pub async fn agent(
    mut client: impl RingClient,
    next: String,
    rounds: usize,
    pipelined: bool,
) -> Tally {
    let mut tally = Tally::default();
    let mut unacked = false;
    for round in 0..rounds {
        let body = format!("round {round}");
        tally.time(0, client.send(&next, &body)).await;
        while tally.received < round + 1 {
            let n = if unacked {
                tally.answered += 1;
                tally.time(1, client.ack_and_recv()).await
            } else {
                tally.time(1, client.recv()).await
            };
            assert!(n > 0, "a round timed out");
            tally.received += n;
            unacked = pipelined;
            if !pipelined {
                tally.time(2, client.ack()).await;
            }
        }
    }
    if unacked {
        tally.time(2, client.ack()).await;
    }
    tally
}
