//! `tiershim mcp`: the served skills ([`crate::skill::served`]) over the Model Context Protocol
//! on stdio, for agents without native skill support. It implements two contracts to the
//! letter: the Skills MCP (tools `list_skills` and `get_skill`, the prompt `init-skills`, the
//! usage guide as the server's `instructions`) and the universal-skills `skill` tool (v1.0.0).
//! tiershim's tiers are added where the contracts leave room, never in place of their text.
//!
//! It only reads skill files; it runs nothing, grants nothing and decides no call. What it knows
//! is kept between requests and indexed, so a request costs the same with 1,000 skills as with
//! ten: it reads the change events queued since the last request ([`watch`]) and scans again
//! only when one matters. An idle server notices changes too (on an event, and every 30
//! seconds, the contract's refresh cycle), and when the listing changed the client is told with
//! `notifications/tools/list_changed` at once: on the session of a client that initialized,
//! and on every open `subscriptions/listen` of a client of the stateless protocol revision.
//!
//! This is the only module with an async runtime, and only `tiershim mcp` reaches it: a gated
//! call never starts one.

pub mod guide;
mod stdio;
mod watch;

use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

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
use crate::skill::served::{Entry, Scanner, Scope, Selection, Served, Session, check_name};
use watch::Watcher;

pub const PROMPT: &str = "init-skills";

/// The refresh cycle of the universal-skills contract: an idle server scans this often even when
/// no change event came (a file system without inotify, a link target outside every watched
/// directory).
const CYCLE: Duration = Duration::from_secs(30);
/// After a change event, how long an idle server lets a writer finish before it scans (a file
/// half written would be reported as broken). A request never waits: its client finished its
/// writes before it asked.
const SETTLE: Duration = Duration::from_millis(100);

/// What the listings show of one skill: when any of it changes, the client is told.
#[derive(Debug, PartialEq, Eq)]
struct Row {
    id: String,
    name: String,
    description: String,
    scope: Scope,
    available: bool,
    tier_required: Option<u8>,
}

fn rows(served: &Served, session: &Session) -> Vec<Row> {
    served
        .entries
        .iter()
        .map(|e| Row {
            id: e.id().to_string(),
            name: e.skill_name().to_string(),
            description: e.meta.description.clone(),
            scope: e.scope,
            available: e.available(session),
            tier_required: e.tier_required,
        })
        .collect()
}

/// Who hears of a change: the session's client (if it initialized) and every listen stream.
type Audience = (Option<Peer<RoleServer>>, Vec<(u64, SubscriptionSink)>);

/// What the server holds between requests.
struct State {
    scanner: Scanner,
    session: Session,
    listing: Vec<Row>,
    /// `tools/list`, built once per change of the listing.
    tools: Arc<Vec<Tool>>,
    /// Counts changes of the listing.
    generation: u64,
    /// `None`: nothing can be watched here, so every request scans.
    watcher: Option<Watcher>,
    /// Problems already written to stderr, so each is written once.
    warned: BTreeSet<(String, String)>,
    /// The session's client, once the session runs.
    peer: Option<Peer<RoleServer>>,
    /// Open `subscriptions/listen` streams (protocol 2026-07-28).
    listeners: Listeners<SubscriptionSink>,
}

/// The open `subscriptions/listen` streams, by a number of our own, and the generation at
/// which each was accepted. A stream is accepted before it is acknowledged and registered after
/// (the SDK sends the acknowledgement in between), so a change found in between would reach no
/// stream; registering compares the generations and says the stream missed one.
struct Listeners<S> {
    open: Vec<(u64, S)>,
    next: u64,
    accepted: VecDeque<u64>,
}

impl<S: Clone> Listeners<S> {
    fn new() -> Listeners<S> {
        Listeners {
            open: Vec::new(),
            next: 0,
            accepted: VecDeque::new(),
        }
    }

    /// A stream was accepted (not yet acknowledged) at `generation`.
    fn accept(&mut self, generation: u64) {
        self.accepted.push_back(generation);
    }

    /// Register the stream accepted first; its id, and whether the listing changed since it
    /// was accepted (then the caller tells it at once).
    fn register(&mut self, sink: S, generation: u64) -> (u64, bool) {
        let id = self.next;
        self.next += 1;
        self.open.push((id, sink));
        let since = self.accepted.pop_front().unwrap_or(generation);
        (id, since != generation)
    }

    fn remove(&mut self, id: u64) {
        self.open.retain(|(i, _)| *i != id);
    }
}

impl State {
    /// Scan again if something changed (`force`: whatever the events say). True when the
    /// listing changed.
    fn freshen(&mut self, force: bool) -> bool {
        let dirty = match &mut self.watcher {
            None => true,
            Some(w) => match w.drain() {
                Ok(changed) => changed || force,
                Err(e) => {
                    eprintln!("tiershim mcp: warning: cannot read change events ({e}); every request scans the skills from now on");
                    self.watcher = None;
                    true
                }
            },
        };
        dirty && self.rescan()
    }

    fn rescan(&mut self) -> bool {
        // A path watched for the first time may have changed between the scan's read and the
        // watch: read once more. Twice more at most, so a directory that keeps changing cannot
        // hold a request.
        for _ in 0..3 {
            self.scanner.rescan();
            let again = self.watcher.as_mut().is_some_and(|w| w.sync(&self.scanner.watch));
            if !again {
                break;
            }
        }
        self.warn_new();
        let now = rows(&self.scanner.served, &self.session);
        if now == self.listing {
            return false;
        }
        self.listing = now;
        self.tools = Arc::new(tools(&self.scanner.served, &self.session));
        self.generation += 1;
        true
    }

    /// Write each problem not yet written to stderr (the client's log): a skipped skill, a
    /// skill served with a fault, a directory that cannot be read.
    fn warn_new(&mut self) {
        for p in &self.scanner.served.problems {
            if self.warned.insert((p.path.clone(), p.message.clone())) {
                eprintln!("tiershim mcp: warning: {}: {}", escape(&p.path), escape(&p.message));
            }
        }
    }

    fn audience(&self) -> Audience {
        (self.peer.clone(), self.listeners.open.clone())
    }
}

#[derive(Clone)]
pub struct SkillServer {
    state: Arc<Mutex<State>>,
}

impl SkillServer {
    /// Scan the skills and start watching them. Inside the runtime: the watcher registers with
    /// its reactor.
    pub fn new(selection: Selection, session: Session) -> SkillServer {
        let scanner = Scanner::new(selection);
        let watcher = match Watcher::new() {
            Ok(w) => Some(w),
            Err(e) => {
                eprintln!("tiershim mcp: warning: cannot watch the skills for changes ({e}); every request scans them");
                None
            }
        };
        let mut state = State {
            listing: Vec::new(),
            tools: Arc::new(Vec::new()),
            generation: 0,
            scanner,
            session,
            watcher,
            warned: BTreeSet::new(),
            peer: None,
            listeners: Listeners::new(),
        };
        if let Some(w) = &mut state.watcher
            && w.sync(&state.scanner.watch)
        {
            state.scanner.rescan();
            w.sync(&state.scanner.watch);
        }
        state.warn_new();
        state.listing = rows(&state.scanner.served, &state.session);
        state.tools = Arc::new(tools(&state.scanner.served, &state.session));
        SkillServer {
            state: Arc::new(Mutex::new(state)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the state half-written in a way that
        // matters (every field is replaced whole), so a poisoned lock is used as it is.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Run `f` on fresh skills; tell the clients when the listing changed.
    async fn fresh<T>(&self, f: impl FnOnce(&State) -> T) -> T {
        let (out, audience) = {
            let mut state = self.lock();
            let changed = state.freshen(false);
            (f(&state), changed.then(|| state.audience()))
        };
        if let Some(a) = audience {
            self.announce(a).await;
        }
        out
    }

    /// `notifications/tools/list_changed` to everyone listening. A client that initialized
    /// (protocol up to 2025-11-25) hears it on the session; a stateless one (2026-07-28) on its
    /// `subscriptions/listen` streams only.
    async fn announce(&self, (peer, listeners): Audience) {
        if let Some(peer) = peer
            && peer.peer_info().is_some_and(|i| i.protocol_version.has_initialize())
            && let Err(e) = peer.notify_tool_list_changed().await
        {
            eprintln!("tiershim mcp: cannot send tools/list_changed: {}", escape(&e.to_string()));
        }
        for (id, sink) in listeners {
            if sink.notify_tool_list_changed().await.is_err() {
                self.lock().listeners.remove(id);
            }
        }
    }

    /// The idle server's part: scan on a change event (after letting the writer finish) and
    /// every [`CYCLE`], and tell the clients when the listing changed. Runs until the runtime
    /// stops, when the client closes the session.
    async fn watch_loop(self) {
        let mut fd = self.lock().watcher.as_ref().map(Watcher::fd);
        let mut cycle = tokio::time::interval_at(tokio::time::Instant::now() + CYCLE, CYCLE);
        loop {
            let force = match &fd {
                Some(fd) => tokio::select! {
                    _ = cycle.tick() => true,
                    ready = fd.readable() => match ready {
                        Ok(mut guard) => {
                            tokio::time::sleep(SETTLE).await;
                            // Cleared before the events are read, so an event after the read
                            // wakes this loop again.
                            guard.clear_ready();
                            false
                        }
                        Err(_) => true,
                    },
                },
                None => {
                    cycle.tick().await;
                    true
                }
            };
            let audience = {
                let mut state = self.lock();
                let changed = state.freshen(force);
                if state.watcher.is_none() {
                    fd = None;
                }
                changed.then(|| state.audience())
            };
            if let Some(a) = audience {
                self.announce(a).await;
            }
        }
    }
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
            guide::LIST_SKILLS_DESCRIPTION,
            schema(json!({"type": "object", "properties": {}, "required": []})),
        )
        .with_title("List Skills")
        .annotate(annotations.clone()),
        Tool::new(
            "get_skill",
            guide::GET_SKILL_DESCRIPTION,
            schema(json!({
                "type": "object",
                "properties": {"id": {"type": "string", "description": guide::GET_SKILL_ID_DESCRIPTION}},
                "required": ["id"]
            })),
        )
        .with_title("Get Skill")
        .annotate(annotations.clone()),
        Tool::new(
            "skill",
            guide::skill_tool_description(served, session),
            schema(json!({
                "type": "object",
                "properties": {"name": {"type": "string", "minLength": 1, "description": guide::SKILL_NAME_DESCRIPTION}},
                "required": ["name"],
                "additionalProperties": false
            })),
        )
        .with_title(guide::SKILL_TITLE)
        .annotate(annotations),
    ]
}

/// One element of `list_skills`: the spec's `id`, `name`, `description`, then tiershim's.
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

/// The skill's file, read again now; a file that vanished or broke since the scan is a tool
/// error that says so.
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

/// The `skill` tool's one argument, checked as the contract's schema (`.strict()`) checks it.
fn skill_name(req: &CallToolRequestParams) -> Result<&str, CallToolResult> {
    let invalid = |why: String| text_error(format!("Invalid input: {why}"));
    let args = req.arguments.as_ref();
    if let Some(extra) = args.and_then(|a| a.keys().find(|k| k.as_str() != "name")) {
        return Err(invalid(format!(
            "unrecognized argument `{}`; the skill tool takes only `name`",
            escape(extra)
        )));
    }
    match args.and_then(|a| a.get("name")) {
        Some(Value::String(s)) if s.trim().is_empty() => Err(invalid(guide::SKILL_NAME_EMPTY.into())),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(invalid("the `name` argument must be a string".into())),
        None => Err(invalid("the `name` argument is required".into())),
    }
}

/// `get_skill`'s `id`.
fn skill_id(req: &CallToolRequestParams) -> Result<&str, CallToolResult> {
    match req.arguments.as_ref().and_then(|a| a.get("id")) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(text_error("The `id` argument must be a string.".into())),
        None => Err(text_error("The `id` argument is required.".into())),
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
        "get_skill" => Ok(match skill_id(req) {
            Err(r) => r,
            Ok(id) => match check_name(id) {
                Err(why) => text_error(format!("Invalid skill id: {why}.")),
                Ok(()) => match served.find_id(id) {
                    None => text_error(format!("Error: Skill '{id}' not found")),
                    Some(e) => match load(e) {
                        Err(r) => r,
                        Ok(skill) => {
                            let mut v = json!({
                                "path": e.path(),
                                "name": e.meta.display_name,
                                "description": e.meta.description,
                                "content": skill.body(),
                                "id": e.id(),
                                "tier_required": e.tier_required,
                                "available": e.available(session),
                            });
                            if let Some(note) = guide::escalation_line(e, session) {
                                v["escalate"] = json!(note);
                            }
                            let mut r = CallToolResult::success(vec![ContentBlock::text(v.to_string())]);
                            r.structured_content = Some(v);
                            r
                        }
                    },
                },
            },
        }),
        "skill" => Ok(match skill_name(req) {
            Err(r) => r,
            Ok(name) => match check_name(name) {
                Err(why) => text_error(format!("Invalid input: {why}.")),
                // The contract's answer for an unknown name is plain content, not an error: it
                // tells the agent what it can load.
                Ok(()) => match served.find(name) {
                    None => CallToolResult::success(vec![ContentBlock::text(guide::not_found(served, name))]),
                    Some(e) => match load(e) {
                        Err(r) => r,
                        Ok(skill) => CallToolResult::success(vec![ContentBlock::text(guide::loaded(e, session, &skill.text))]),
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
            .with_instructions(guide::guide(&state.session))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = self.fresh(|state| Arc::clone(&state.tools)).await;
        Ok(ListToolsResult::with_all_items(tools.as_ref().clone()))
    }

    async fn call_tool(&self, request: CallToolRequestParams, _context: RequestContext<RoleServer>) -> Result<CallToolResponse, McpError> {
        self.fresh(|state| call(&request, &state.scanner.served, &state.session))
            .await
            .map(CallToolResponse::from)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(vec![
            Prompt::new(
                PROMPT,
                Some("Initialize a conversation with skill awareness and usage instructions"),
                None,
            )
            .with_title("Initialize Skills"),
        ]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != PROMPT {
            return Err(McpError::invalid_params(
                format!("unknown prompt `{}`; the prompt is {PROMPT}", request.name),
                None,
            ));
        }
        let text = guide::guide(&self.lock().session);
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description("Initialize a conversation with skill awareness and usage instructions")
            .into())
    }

    /// Called before the subscription is acknowledged: the point from which this stream must
    /// hear of every change is recorded here, so a change found between the acknowledgement and
    /// `listen` is not lost.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        let _ = requested;
        let mut state = self.lock();
        let generation = state.generation;
        state.listeners.accept(generation);
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let sink = context.sink().clone();
        let (id, missed) = {
            let mut state = self.lock();
            let generation = state.generation;
            state.listeners.register(sink.clone(), generation)
        };
        if missed && sink.notify_tool_list_changed().await.is_err() {
            self.lock().listeners.remove(id);
        }
        context.cancelled().await;
        self.lock().listeners.remove(id);
        Ok(())
    }
}

/// Serve on stdin/stdout until the client closes stdin. A single-threaded runtime: requests
/// are small, and the work is reading change events and, after a change, a scan.
pub fn serve(selection: Selection, session: Session) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    rt.block_on(async move {
        let server = SkillServer::new(selection, session);
        let (read, write) = rmcp::transport::stdio_pipes();
        let running = server
            .clone()
            .serve(stdio::Stdio::new(read, write))
            .await
            .map_err(|e| format!("cannot start the MCP session: {e}"))?;
        server.lock().peer = Some(running.peer().clone());
        tokio::spawn(server.watch_loop());
        running
            .waiting()
            .await
            .map_err(|e| format!("the MCP session ended with an error: {e}"))?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_stream_registered_after_a_change_it_was_accepted_before_has_missed_it() {
        let mut l: Listeners<&str> = Listeners::new();
        l.accept(4);
        assert_eq!(l.register("quiet", 4), (0, false));
        l.accept(4);
        l.accept(5);
        // The listing changed (generation 5) between the first acceptance and its registration.
        assert_eq!(l.register("missed", 5), (1, true));
        assert_eq!(l.register("later", 5), (2, false));
        l.remove(1);
        let open: Vec<&str> = l.open.iter().map(|(_, s)| *s).collect();
        assert_eq!(open, vec!["quiet", "later"]);
    }
}
