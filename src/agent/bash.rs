//! `hive-agent mcp-bash`: the `execution` group's MCP server, seen by
//! Claude as `mcp__bash__run` and `mcp__bash__status`.
//!
//! - `run {command, timeout_seconds?, background?}` runs `bash -c command`
//!   in the agent's working directory. In the foreground it waits (default
//!   120 s, at most 600 s; then the process group is killed) and answers the
//!   exit status with the output's tail; in the background it answers a
//!   task id at once, and when the task ends a *transient* `wake` from
//!   `bash` tells the agent (memory only: a harness restart must not
//!   replay it).
//! - `status {id?}` answers one background task's state and output tail,
//!   or every task's state.
//!
//! A shell is the point of this tool (the agent asked for one, inside its
//! own container); the daemon never sees the command. Output is capped at
//! [`super::render::MAX_TOOL_OUTPUT`] (the tail is kept: errors are at the
//! end), and each task keeps at most [`KEEP_OUTPUT`] bytes while it runs.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};
use tokio::io::AsyncReadExt;

use super::process;
use super::render::MAX_TOOL_OUTPUT;
use super::socket::AgentSocket;
use crate::wire::agent::Request;

/// The default and the longest foreground wait, in seconds.
pub const DEFAULT_TIMEOUT: u64 = 120;
pub const MAX_TIMEOUT: u64 = 600;
/// The most output bytes a task keeps (its tail).
pub const KEEP_OUTPUT: usize = 64 * 1024;

#[derive(Debug, Clone)]
enum TaskState {
    Running,
    Exited(String),
}

#[derive(Debug)]
struct Task {
    command: String,
    state: TaskState,
    output: Arc<Mutex<Vec<u8>>>,
}

/// The `bash` server: its tasks and the socket for completion wakes.
#[derive(Debug, Clone)]
pub struct BashServer {
    socket: AgentSocket,
    tasks: Arc<Mutex<BTreeMap<u64, Task>>>,
    next: Arc<Mutex<u64>>,
}

impl BashServer {
    pub fn new(socket: AgentSocket) -> Self {
        Self {
            socket,
            tasks: Arc::default(),
            next: Arc::new(Mutex::new(1)),
        }
    }

    fn tools() -> Vec<Tool> {
        let obj = |v: Value| match v {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        vec![
            Tool::new(
                "run",
                "Run a bash command in my container; waits for it (or returns a task id with background: true) and answers its exit status and output tail.",
                obj(json!({
                    "type": "object",
                    "properties": {
                        "command": {"type": "string"},
                        "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT},
                        "background": {"type": "boolean"},
                    },
                    "required": ["command"],
                    "additionalProperties": false,
                })),
            ),
            Tool::new(
                "status",
                "State and output tail of a background task (by id), or the state of every task.",
                obj(json!({
                    "type": "object",
                    "properties": {"id": {"type": "integer"}},
                    "additionalProperties": false,
                })),
            ),
        ]
    }

    async fn run(&self, args: &Map<String, Value>) -> Result<String, String> {
        let command = args
            .get("command")
            .and_then(Value::as_str)
            .filter(|c| !c.trim().is_empty())
            .ok_or("run: `command` (a non-empty string) is required")?
            .to_owned();
        let timeout = args
            .get("timeout_seconds")
            .and_then(Value::as_u64)
            .unwrap_or(DEFAULT_TIMEOUT)
            .clamp(1, MAX_TIMEOUT);
        let background = args
            .get("background")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let mut child = process::command("bash")
            .arg("-c")
            .arg(&command)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start bash: {e}"))?;
        let output = Arc::new(Mutex::new(Vec::new()));
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            readers.push(tokio::spawn(collect(out, output.clone())));
        }
        if let Some(err) = child.stderr.take() {
            readers.push(tokio::spawn(collect(err, output.clone())));
        }
        if background {
            let id = {
                let mut next = self.next.lock().map_err(|_| "task table poisoned")?;
                let id = *next;
                *next += 1;
                id
            };
            self.tasks
                .lock()
                .map_err(|_| "task table poisoned")?
                .insert(
                    id,
                    Task {
                        command: command.clone(),
                        state: TaskState::Running,
                        output: output.clone(),
                    },
                );
            let me = self.clone();
            tokio::spawn(async move {
                let status = describe(child.wait().await);
                for r in readers {
                    let _ = r.await;
                }
                if let Ok(mut tasks) = me.tasks.lock()
                    && let Some(task) = tasks.get_mut(&id)
                {
                    task.state = TaskState::Exited(status.clone());
                }
                let wake = Request::Wake {
                    from: "bash".into(),
                    body: format!(
                        "background task {id} ({command}) {status}; mcp__bash__status {{\"id\": {id}}} shows its output"
                    ),
                    transient: true,
                };
                let _ = me.socket.call(&wake, Duration::from_secs(30)).await;
            });
            return Ok(format!("started background task {id}"));
        }
        let status = match tokio::time::timeout(Duration::from_secs(timeout), child.wait()).await {
            Ok(status) => describe(status),
            Err(_) => {
                process::stop_group(&mut child, Duration::from_secs(2)).await;
                format!("was killed after {timeout} s (its time limit)")
            }
        };
        for r in readers {
            let _ = r.await;
        }
        Ok(format!("{status}\n{}", tail(&output)))
    }

    fn status(&self, args: &Map<String, Value>) -> Result<String, String> {
        let tasks = self.tasks.lock().map_err(|_| "task table poisoned")?;
        let state = |t: &Task| match &t.state {
            TaskState::Running => "running".to_owned(),
            TaskState::Exited(s) => s.clone(),
        };
        match args.get("id") {
            None => Ok(if tasks.is_empty() {
                "no background tasks".into()
            } else {
                tasks
                    .iter()
                    .map(|(id, t)| format!("{id}: {} — {}", state(t), t.command))
                    .collect::<Vec<_>>()
                    .join("\n")
            }),
            Some(id) => {
                let task = id
                    .as_u64()
                    .and_then(|id| tasks.get(&id))
                    .ok_or_else(|| format!("no background task {id}"))?;
                Ok(format!("{}\n{}", state(task), tail(&task.output)))
            }
        }
    }
}

fn describe(status: std::io::Result<std::process::ExitStatus>) -> String {
    match status {
        Ok(s) => match s.code() {
            Some(code) => format!("exited with status {code}"),
            None => format!("ended by a signal ({s})"),
        },
        Err(e) => format!("could not be waited for: {e}"),
    }
}

async fn collect(mut from: impl tokio::io::AsyncRead + Unpin, into: Arc<Mutex<Vec<u8>>>) {
    let mut buf = [0u8; 8192];
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0 {
            break;
        }
        if let Ok(mut out) = into.lock() {
            out.extend_from_slice(&buf[..n]);
            if out.len() > KEEP_OUTPUT {
                let cut = out.len() - KEEP_OUTPUT;
                out.drain(..cut);
            }
        }
    }
}

/// The last [`MAX_TOOL_OUTPUT`] bytes of a task's output, as text.
fn tail(output: &Mutex<Vec<u8>>) -> String {
    let Ok(out) = output.lock() else {
        return String::new();
    };
    let budget = MAX_TOOL_OUTPUT - 100;
    let text = String::from_utf8_lossy(&out);
    if text.len() <= budget {
        return text.into_owned();
    }
    let mut start = text.len() - budget;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[... {start} earlier bytes cut]\n{}", &text[start..])
}

impl ServerHandler for BashServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new(super::tools::BASH_SERVER_NAME, env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(Self::tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            "run" => self.run(&args).await,
            "status" => self.status(&args),
            other => Err(format!(
                "unknown tool {other:?}; this server has run and status"
            )),
        };
        Ok(match result {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(text) => CallToolResult::error(vec![ContentBlock::text(text)]),
        }
        .into())
    }
}
