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

    async fn ask(&mut self, line: String) -> String {
        self.write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        self.lines
            .next_line()
            .await
            .unwrap()
            .expect("the daemon answered")
    }
}

impl RingClient for Broker {
    async fn send(&mut self, next: &str, body: &str) {
        let sent = self
            .ask(format!(r#"{{"cmd":"send","to":"{next}","body":"{body}"}}"#))
            .await;
        assert_eq!(sent, r#"{"kind":"ok","delivered":1}"#);
    }

    async fn recv(&mut self) -> usize {
        let got = self
            .ask(r#"{"cmd":"recv","wait_seconds":30,"max":10}"#.to_owned())
            .await;
        let v: serde_json::Value = serde_json::from_str(&got).unwrap();
        v["messages"].as_array().map_or(0, Vec::len)
    }

    async fn ack(&mut self) {
        let acked = self.ask(r#"{"cmd":"ack_turn"}"#.to_owned()).await;
        assert_eq!(acked, r#"{"kind":"ok"}"#);
    }
}

/// A connection to Redis acting as agent `me`: its inbox is the stream
/// `me`, read through the consumer group `g`.
pub struct Streams {
    pub client: redis::Client,
    pub me: String,
    pub read: Vec<Vec<u8>>,
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
        let got = self
            .client
            .ask(&[
                b"XREADGROUP",
                b"GROUP",
                b"g",
                self.me.as_bytes(),
                b"COUNT",
                b"10",
                b"BLOCK",
                b"30000",
                b"STREAMS",
                self.me.as_bytes(),
                b">",
            ])
            .await
            .unwrap();
        // [[stream, [[id, [field, value]], ...]]], or nil on timeout.
        self.read = got
            .items()
            .iter()
            .flat_map(|stream| stream.items().get(1).map_or(&[][..], |e| e.items()))
            .map(|entry| entry.items()[0].bytes().to_vec())
            .collect();
        self.read.len()
    }

    async fn ack(&mut self) {
        let mut args: Vec<&[u8]> = vec![b"XACK", self.me.as_bytes(), b"g"];
        args.extend(self.read.iter().map(Vec::as_slice));
        let acked = self.client.ask(&args).await.unwrap();
        assert_eq!(acked, redis::Value::Int(self.read.len() as i64));
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

/// `rounds` rounds of the ring for one agent.
pub async fn agent(mut client: impl RingClient, next: String, rounds: usize) -> Tally {
    let mut tally = Tally::default();
    for round in 0..rounds {
        let body = format!("round {round}");
        tally.time(0, client.send(&next, &body)).await;
        while tally.received < round + 1 {
            let n = tally.time(1, client.recv()).await;
            assert!(n > 0, "a round timed out");
            tally.received += n;
            tally.time(2, client.ack()).await;
        }
    }
    tally
}
