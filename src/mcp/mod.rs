//! `tiershim mcp`: the served skills ([`crate::skill::served`]) over the Model Context Protocol
//! on stdio, for agents without native skill support. Tools `list_skills`, `get_skill` and
//! `skill`, the prompt `init-skills`, and the same guide as the server's `instructions`.
//!
//! It only reads skill files; it runs nothing, grants nothing and decides no call. Every
//! request first takes the fingerprint of the skill directories (stats only); when the listing
//! changed, the client is told with `notifications/tools/list_changed` (on the session of a
//! client that initialized, and on every open `subscriptions/listen` of a client that uses the
//! stateless protocol revision).
//!
//! This is the only module with an async runtime, and only `tiershim mcp` reaches it: a gated
//! call never starts one.

pub mod guide;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    Implementation, JsonObject, ListPromptsResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage, Role,
    ServerCapabilities, ServerConfig, SubscriptionFilter, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer, ServiceExt, SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData as McpError, Peer};
use serde_json::{Value, json};

use crate::sanitize::escape;
use crate::skill::served::{Entry, Scanner, Selection, Served, Session, check_name};

pub const PROMPT: &str = "init-skills";

/// What the server holds between requests.
struct State {
    scanner: Scanner,
    /// What the tool list shows (id, description, available), to tell a real change from an edit
    /// that leaves the listing alone.
    /// What the tool description shows of each skill: a change is a `list_changed`.
    listing: Vec<(String, String, bool, Option<u8>)>,
    /// Problems already written to stderr, so each is written once.
    warned: BTreeSet<(String, String)>,
    /// Open `subscriptions/listen` streams (protocol 2026-07-28), by a number of our own.
    listeners: Vec<(u64, SubscriptionSink)>,
    next_listener: u64,
}

#[derive(Clone)]
pub struct SkillServer {
    session: Session,
    state: Arc<Mutex<State>>,
}

fn listing(served: &Served, session: &Session) -> Vec<(String, String, bool, Option<u8>)> {
    served
        .entries
        .iter()
        .map(|e| {
            (
                e.id().to_string(),
                e.meta.description.clone(),
                e.available(session),
                e.tier_required,
            )
        })
        .collect()
}

impl SkillServer {
    pub fn new(selection: Selection, session: Session) -> SkillServer {
        let scanner = Scanner::new(selection);
        let mut state = State {
            listing: listing(&scanner.served, &session),
            scanner,
            warned: BTreeSet::new(),
            listeners: Vec::new(),
            next_listener: 0,
        };
        warn_new(&mut state);
        SkillServer {
            session,
            state: Arc::new(Mutex::new(state)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the state half-written in a way that
        // matters (every field is replaced whole), so a poisoned lock is used as it is.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Re-read the skills if their directories changed; true when the tool listing changed.
    fn refresh(state: &mut State, session: &Session) -> bool {
        if !state.scanner.refresh() {
            return false;
        }
        warn_new(state);
        let now = listing(&state.scanner.served, session);
        if now == state.listing {
            return false;
        }
        state.listing = now;
        true
    }

    /// Run `f` on fresh skills; tell the client when the listing changed.
    async fn with_fresh<T>(&self, peer: &Peer<RoleServer>, f: impl FnOnce(&Served, &Session) -> T) -> T {
        let (out, changed, listeners) = {
            let mut state = self.lock();
            let changed = SkillServer::refresh(&mut state, &self.session);
            let out = f(&state.scanner.served, &self.session);
            (out, changed, state.listeners.clone())
        };
        if changed {
            // A client that initialized (protocol up to 2025-11-25) hears it on the session; a
            // stateless one (2026-07-28) on its subscriptions/listen streams only.
            if peer.peer_info().is_some_and(|i| i.protocol_version.has_initialize())
                && let Err(e) = peer.notify_tool_list_changed().await
            {
                eprintln!("tiershim mcp: cannot send tools/list_changed: {}", escape(&e.to_string()));
            }
            for (id, sink) in listeners {
                if sink.notify_tool_list_changed().await.is_err() {
                    self.lock().listeners.retain(|(i, _)| *i != id);
                }
            }
        }
        out
    }

    fn tools(served: &Served, session: &Session) -> Vec<Tool> {
        let annotations = ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false);
        let schema = |v: Value| -> Arc<JsonObject> {
            match v {
                Value::Object(m) => Arc::new(m),
                _ => Arc::new(JsonObject::new()),
            }
        };
        vec![
            Tool::new(
                "list_skills",
                "List every skill: id, name, description, where it was found, the tier it requires, and whether \
                 this session may use it.",
                schema(json!({"type": "object", "properties": {}, "additionalProperties": false})),
            )
            .annotate(annotations.clone()),
            Tool::new(
                "get_skill",
                "Get one skill by id: the absolute path of its file, its name and description, and its text \
                 without frontmatter. Files it refers to are relative to the file's directory.",
                schema(json!({
                    "type": "object",
                    "properties": {"id": {"type": "string", "description": "The skill's id, from list_skills."}},
                    "required": ["id"],
                    "additionalProperties": false
                })),
            )
            .annotate(annotations.clone()),
            Tool::new(
                "skill",
                guide::skill_tool_description(served, session),
                schema(json!({
                    "type": "object",
                    "properties": {"name": {"type": "string", "description": "The skill's name, as listed in <available_skills>."}},
                    "required": ["name"],
                    "additionalProperties": false
                })),
            )
            .annotate(annotations),
        ]
    }
}

/// Write each problem not yet written to stderr (the client's log): a skipped skill, a link
/// out of its directory, a directory that cannot be read.
fn warn_new(state: &mut State) {
    for p in &state.scanner.served.problems {
        let key = (p.path.clone(), p.message.clone());
        if state.warned.insert(key) {
            eprintln!("tiershim mcp: warning: {}: {}", escape(&p.path), escape(&p.message));
        }
    }
}

/// One element of `list_skills`.
#[derive(serde::Serialize)]
struct ListRow<'a> {
    id: &'a str,
    name: &'a str,
    description: &'a str,
    location: String,
    tier_required: Option<u8>,
    available: bool,
}

impl<'a> ListRow<'a> {
    fn of(e: &'a Entry, session: &Session) -> ListRow<'a> {
        ListRow {
            id: e.id(),
            name: &e.meta.display_name,
            description: &e.meta.description,
            location: e.meta.location.to_string(),
            tier_required: e.tier_required,
            available: e.available(session),
        }
    }
}

/// The body, under the escalation line when the skill is above the session's tier.
fn content(e: &Entry, body: &str, session: &Session) -> String {
    match guide::escalation_line(e, session) {
        Some(line) => format!("{line}\n\n{body}"),
        None => body.to_string(),
    }
}

/// The skill's text, read again now; a file that vanished or broke since the listing is a
/// tool error that says so.
fn load(e: &Entry) -> Result<crate::skill::Skill, CallToolResult> {
    e.load().map_err(|p| {
        text_error(format!(
            "Skill {} cannot be loaded: {}: {}",
            e.id(),
            escape(&p.path),
            escape(&p.message)
        ))
    })
}

fn text_error(msg: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(msg)])
}

fn available_list(served: &Served) -> String {
    let names: Vec<&str> = served.entries.iter().map(Entry::id).collect();
    if names.is_empty() {
        "No skills are available.".to_string()
    } else {
        format!("Available skills: {}", names.join(", "))
    }
}

fn not_found(served: &Served, asked: &str) -> CallToolResult {
    text_error(format!("Skill not found: {asked}\n\n{}", available_list(served)))
}

/// A string argument, or the tool result that says it is missing.
fn string_arg<'a>(req: &'a CallToolRequestParams, key: &str) -> Result<&'a str, CallToolResult> {
    match req.arguments.as_ref().and_then(|a| a.get(key)) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(text_error(format!("The `{key}` argument must be a string."))),
        None => Err(text_error(format!("The `{key}` argument is required."))),
    }
}

fn call(req: &CallToolRequestParams, served: &Served, session: &Session) -> Result<CallToolResult, McpError> {
    match req.name.as_ref() {
        "list_skills" => {
            // Text only, written straight from the entries: with 1,000 skills a JSON tree of the
            // list (for structuredContent) would double the server's peak memory.
            let rows: Vec<ListRow<'_>> = served.entries.iter().map(|e| ListRow::of(e, session)).collect();
            let text = serde_json::to_string(&rows).unwrap_or_default();
            Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
        }
        "get_skill" => Ok(match string_arg(req, "id") {
            Err(r) => r,
            Ok(id) => match check_name(id) {
                Err(why) => text_error(format!("Invalid skill id: {why}.")),
                Ok(()) => match served.find(id) {
                    None => not_found(served, id),
                    Some(e) => match load(e) {
                        Err(r) => r,
                        Ok(skill) => {
                            let v = json!({
                                "id": e.id(),
                                "path": e.path(),
                                "name": e.meta.display_name,
                                "description": e.meta.description,
                                "content": content(e, skill.body(), session),
                                "tier_required": e.tier_required,
                                "available": e.available(session),
                            });
                            let mut r = CallToolResult::success(vec![ContentBlock::text(v.to_string())]);
                            r.structured_content = Some(v);
                            r
                        }
                    },
                },
            },
        }),
        "skill" => Ok(match string_arg(req, "name") {
            Err(r) => r,
            Ok(name) => match check_name(name) {
                // The name is not echoed: it may hold anything.
                Err(why) => text_error(format!("Invalid skill name: {why}.\n\n{}", available_list(served))),
                Ok(()) => match served.find(name) {
                    None => not_found(served, name),
                    Some(e) => match load(e) {
                        Err(r) => r,
                        Ok(skill) => {
                            let base = e
                                .base
                                .as_ref()
                                .map(|b| b.display().to_string())
                                .unwrap_or_else(|| "(built into tiershim; it has no files beside it)".into());
                            // The escalation line, when there is one, comes first.
                            let first = guide::escalation_line(e, session).map(|l| l + "\n").unwrap_or_default();
                            let text = format!("{first}Loading: {}\nBase directory: {base}\n\n{}", e.id(), skill.body());
                            CallToolResult::success(vec![ContentBlock::text(text)])
                        }
                    },
                },
            },
        }),
        other => Err(McpError::invalid_params(
            format!("unknown tool `{other}`; the tools are list_skills, get_skill and skill"),
            None,
        )),
    }
}

impl ServerHandler for SkillServer {
    fn get_info(&self) -> ServerConfig {
        let caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .build();
        let state = self.lock();
        ServerConfig::new(caps)
            .with_server_info(Implementation::new("tiershim", env!("CARGO_PKG_VERSION")))
            .with_instructions(guide::guide(&state.scanner.served, &self.session, true))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = self.with_fresh(&context.peer, SkillServer::tools).await;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(&self, request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Result<CallToolResponse, McpError> {
        self.with_fresh(&context.peer, |served, session| call(&request, served, session))
            .await
            .map(CallToolResponse::from)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.with_fresh(&context.peer, |_, _| ()).await;
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            PROMPT,
            Some("How to find, load and use the skills this server serves, with the list of skills."),
            None,
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != PROMPT {
            return Err(McpError::invalid_params(
                format!("unknown prompt `{}`; the prompt is {PROMPT}", request.name),
                None,
            ));
        }
        let text = self
            .with_fresh(&context.peer, |served, session| guide::guide(served, session, true))
            .await;
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description("Using skills")
            .into())
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        let _ = requested;
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let id = {
            let mut state = self.lock();
            let id = state.next_listener;
            state.next_listener += 1;
            state.listeners.push((id, context.sink().clone()));
            id
        };
        context.cancelled().await;
        self.lock().listeners.retain(|(i, _)| *i != id);
        Ok(())
    }
}

/// Serve on stdin/stdout until the client closes stdin. A single-threaded runtime: requests
/// are small and the work is a few stats and, after a change, a parse.
pub fn serve(selection: Selection, session: Session) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    rt.block_on(async move {
        let server = SkillServer::new(selection, session);
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| format!("cannot start the MCP session: {e}"))?;
        running
            .waiting()
            .await
            .map_err(|e| format!("the MCP session ended with an error: {e}"))?;
        Ok(())
    })
}
