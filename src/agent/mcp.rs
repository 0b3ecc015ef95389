//! `hive-agent mcp`: the `hyperhive` MCP server over stdio (rmcp), one
//! agent-socket request per tool call.
//!
//! A daemon refusal (`{"kind":"err"}`), arguments that do not fit, and a
//! hive that stays unreachable for the call's budget are all tool results
//! with `isError: true` and words for the model — never a JSON-RPC error
//! (those are for protocol faults) and never a crash: the server must
//! outlive anything one call meets.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};

use super::idempotency::Calls;
use super::render::response_text;
use super::socket::{AgentSocket, SocketError};
use super::tools::{self, SERVER_NAME, Selection, ToolSpec};
use crate::wire::agenda::ToolGroup;
use crate::wire::agent::{Request, Response};

/// How long one tool call may take, connect retries included (a `recv`
/// gets its wait on top).
pub const CALL_BUDGET: Duration = Duration::from_secs(30);

/// The `hyperhive` server.
#[derive(Debug, Clone)]
pub struct Hyperhive {
    socket: AgentSocket,
    tools: Vec<&'static ToolSpec>,
    budget: Duration,
    /// The attempt's call log: each acting call's idempotency key.
    calls: Calls,
}

impl Hyperhive {
    pub fn new(socket: AgentSocket, selection: &Selection) -> Self {
        Self {
            socket,
            tools: selection.hyperhive_tools(),
            budget: CALL_BUDGET,
            calls: Calls::default(),
        }
    }

    /// Key the acting calls in `calls` (the turn's call log, see
    /// [`super::idempotency`]).
    pub fn with_calls(mut self, calls: Calls) -> Self {
        self.calls = calls;
        self
    }

    /// Shorter budgets for tests of the restart path.
    pub fn with_budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    /// Answer one tool call: the text and whether it is an error.
    pub async fn call(
        &self,
        name: &str,
        args: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> (String, bool) {
        if !self.tools.iter().any(|t| t.name == name) {
            let offered: Vec<&str> = self.tools.iter().map(|t| t.name).collect();
            return (
                format!(
                    "tool {name:?} is not offered to this agent (its tool groups give: {})",
                    offered.join(", ")
                ),
                true,
            );
        }
        let request = match tools::request_for(name, args) {
            Ok(request) => request,
            Err(words) => return (words, true),
        };
        let budget = match &request {
            Request::Recv { wait_seconds, .. } => {
                self.budget + Duration::from_secs(wait_seconds.unwrap_or(0))
            }
            _ => self.budget,
        };
        let key = self.calls.key_for(&request);
        let mut answer = self
            .socket
            .call_keyed(&request, key.as_deref(), budget)
            .await;
        // A keyed call that got no answer (the connection broke, say the
        // daemon was killed mid-call) is asked once more with the same
        // key: served or not the first time, it is done once. Unkeyed, it
        // is left to the model, told it may have been served.
        if key.is_some() && matches!(answer, Err(SocketError::NoAnswer { .. })) {
            answer = self
                .socket
                .call_keyed(&request, key.as_deref(), budget)
                .await;
        }
        match answer {
            Ok(response) => response_text(&response),
            Err(err) => (err.to_string(), true),
        }
    }
}

/// The groups to offer when `HIVE_TOOL_GROUPS` is absent: the manager's
/// when the socket serves privileged verbs (probed with `list_schedules`,
/// which an agent socket refuses and the manager socket answers), the
/// agent default otherwise — also when the hive cannot be reached.
pub async fn default_groups(socket: &AgentSocket) -> &'static [ToolGroup] {
    match socket
        .call(&Request::ListSchedules, Duration::from_secs(5))
        .await
    {
        Ok(Response::Schedules { .. }) => ToolGroup::MANAGER_DEFAULT,
        Ok(_)
        | Err(
            SocketError::Restarting { .. }
            | SocketError::NoAnswer { .. }
            | SocketError::Malformed { .. },
        ) => ToolGroup::AGENT_DEFAULT,
    }
}

impl ServerHandler for Hyperhive {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "The hive's tools: messages to other agents and the operator, status, \
                 reminders, questions. A refused call says why in its result.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(
            self.tools
                .iter()
                .map(|t| Tool::new(t.name, t.description, t.schema()))
                .collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let (text, is_error) = self.call(&request.name, request.arguments).await;
        let content = vec![ContentBlock::text(text)];
        Ok(if is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
        .into())
    }
}

/// Serve `handler` on stdin/stdout until the client goes away.
pub async fn serve_stdio<H: ServerHandler>(handler: H) -> anyhow::Result<()> {
    let running = handler
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| anyhow::anyhow!("mcp handshake: {e}"))?;
    running
        .waiting()
        .await
        .map_err(|e| anyhow::anyhow!("mcp server: {e}"))?;
    Ok(())
}

#[cfg(test)]
#[path = "mcp_tests.rs"]
mod tests;
