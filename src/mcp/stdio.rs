//! The stdio transport of `tiershim mcp`: newline-delimited JSON-RPC on stdin and stdout, with
//! an answer for every request, including the ones the MCP SDK's own transport drops: a line
//! that is not JSON gets `-32700` (Parse error), a request whose `params` do not fit its method
//! gets `-32602` (Invalid params) with its id, anything else malformed gets `-32600` (Invalid
//! Request), and a line longer than [`MAX_LINE`] gets an error at once (with the request's id
//! when it can be read from the line's start) and is discarded unread, never buffered. Replies
//! to notifications and to the client's own responses are never sent, as JSON-RPC requires.
//!
//! It moves bytes and classifies malformed input; what a well-formed message means is the
//! server's business.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ClientRequest, ErrorCode, GetPromptRequestParams, InitializeRequestParams, JsonRpcMessage, NumberOrString,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The longest line read, in bytes. Every request this server takes is small (a skill name is at
/// most 256 bytes), so a longer line is a mistake or an attack, and is not kept in memory.
pub const MAX_LINE: usize = 1024 * 1024;
/// How much of an overlong line is kept to find its request id.
const ID_PREFIX: usize = 64 * 1024;

pub struct Stdio<R, W> {
    read: BufReader<R>,
    /// The line being read: kept across cancelled reads (the service loop polls `receive` in a
    /// `select!`), so a partial line is resumed, never lost.
    line: Vec<u8>,
    /// Past [`MAX_LINE`]: the rest of this line is dropped.
    discarding: bool,
    write: Arc<Mutex<W>>,
}

impl<R, W> Stdio<R, W>
where
    R: tokio::io::AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub fn new(read: R, write: W) -> Stdio<R, W> {
        Stdio {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            write: Arc::new(Mutex::new(write)),
        }
    }

    /// Write one error reply from a task of its own: `receive` may be cancelled at any await,
    /// and a reply cut short would corrupt the stream.
    fn reply(&self, id: Option<NumberOrString>, code: ErrorCode, message: String) {
        let mut bytes = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code.0, "message": message}}).to_string();
        bytes.push('\n');
        let write = Arc::clone(&self.write);
        tokio::spawn(async move {
            let mut w = write.lock().await;
            if let Err(e) = w.write_all(bytes.as_bytes()).await.and(w.flush().await) {
                eprintln!("tiershim mcp: cannot write an error reply: {e}");
            }
        });
    }

    /// The next whole line, or `None` at the end of input. An overlong line is answered here.
    async fn next_line(&mut self) -> Option<Vec<u8>> {
        loop {
            let (used, done) = {
                let buf = match self.read.fill_buf().await {
                    Ok(b) => b,
                    Err(e) => {
                        eprintln!("tiershim mcp: cannot read the client's messages: {e}");
                        return None;
                    }
                };
                if buf.is_empty() {
                    return None;
                }
                let newline = buf.iter().position(|b| *b == b'\n');
                let take = newline.map_or(buf.len(), |i| i + 1);
                if self.discarding {
                    (take, newline.is_some())
                } else if self.line.len() + take > MAX_LINE {
                    // Answer now, from what the line's start says, and drop the rest.
                    let keep = ID_PREFIX.saturating_sub(self.line.len()).min(take);
                    self.line.extend_from_slice(&buf[..keep]);
                    let id = leading_id(&self.line);
                    self.line.clear();
                    self.discarding = true;
                    self.reply(
                        id,
                        ErrorCode::INVALID_REQUEST,
                        format!(
                            "Invalid Request: the message is longer than {MAX_LINE} bytes, the most this server reads; it was not read"
                        ),
                    );
                    (take, newline.is_some())
                } else {
                    self.line.extend_from_slice(&buf[..take]);
                    (take, newline.is_some())
                }
            };
            self.read.consume(used);
            if done {
                if std::mem::take(&mut self.discarding) {
                    continue;
                }
                return Some(std::mem::take(&mut self.line));
            }
        }
    }

    /// A line that is not a message the server takes: the reply it gets, if any.
    fn malformed(&self, line: &[u8], err: &serde_json::Error) {
        if matches!(
            err.classify(),
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof
        ) {
            self.reply(None, ErrorCode::PARSE_ERROR, format!("Parse error: {err}"));
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            self.reply(None, ErrorCode::PARSE_ERROR, format!("Parse error: {err}"));
            return;
        };
        let Some(obj) = v.as_object() else {
            let what = if v.is_array() {
                "batches are not supported; send one message per line"
            } else {
                "a message is a JSON object"
            };
            self.reply(None, ErrorCode::INVALID_REQUEST, format!("Invalid Request: {what}"));
            return;
        };
        let id = obj.get("id").and_then(request_id);
        let method = obj.get("method").and_then(Value::as_str);
        // A notification, or a response from the client: never answered.
        let response = method.is_none() && (obj.contains_key("result") || obj.contains_key("error"));
        let notification = method.is_some() && !obj.contains_key("id");
        if response || notification {
            return;
        }
        match method {
            Some(m) if id.is_some() && obj.get("jsonrpc") == Some(&json!("2.0")) => {
                self.reply(id, ErrorCode::INVALID_PARAMS, format!("Invalid params for {m}: {err}"));
            }
            _ => self.reply(
                id,
                ErrorCode::INVALID_REQUEST,
                "Invalid Request: a request has \"jsonrpc\": \"2.0\", a string or integer \"id\" and a \"method\"".into(),
            ),
        }
    }
}

/// The requests a client may send, as the protocol defines them (every revision this server
/// speaks). A line naming one of them that the SDK could not read as it is, is a params error.
const REQUEST_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "subscriptions/listen",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/templates/list",
    "tools/call",
    "tools/list",
];

/// What is wrong with the params of a request of a known method.
fn params_error(method: &str, params: Option<&Value>) -> String {
    let Some(p) = params else {
        return format!("Invalid params for {method}: params are required");
    };
    let why = match method {
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(p.clone()).err(),
        "prompts/get" => serde_json::from_value::<GetPromptRequestParams>(p.clone()).err(),
        "initialize" => serde_json::from_value::<InitializeRequestParams>(p.clone()).err(),
        _ => None,
    };
    match why {
        Some(e) => format!("Invalid params for {method}: {e}"),
        None => format!("Invalid params for {method}"),
    }
}

/// A JSON-RPC request id: a string or an integer.
fn request_id(v: &Value) -> Option<NumberOrString> {
    match v {
        Value::String(s) => Some(NumberOrString::String(s.as_str().into())),
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        _ => None,
    }
}

/// The `"id"` of a JSON object whose text is cut short: the members before it are read one by
/// one, and the first that cannot be (the cut) ends the search.
fn leading_id(text: &[u8]) -> Option<NumberOrString> {
    let ws = |i: usize| i + text[i.min(text.len())..].iter().take_while(|b| b.is_ascii_whitespace()).count();
    let value_at = |i: usize| -> Option<(Value, usize)> {
        let mut values = serde_json::Deserializer::from_slice(text.get(i..)?).into_iter::<Value>();
        let v = values.next()?.ok()?;
        Some((v, i + values.byte_offset()))
    };
    let mut i = ws(0);
    if text.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        let (key, after) = value_at(ws(i))?;
        i = ws(after);
        if text.get(i) != Some(&b':') {
            return None;
        }
        let (v, after) = value_at(ws(i + 1))?;
        if key.as_str() == Some("id") {
            return request_id(&v);
        }
        i = ws(after);
        if text.get(i) != Some(&b',') {
            return None;
        }
        i += 1;
    }
}

impl<R, W> Transport<RoleServer> for Stdio<R, W>
where
    R: tokio::io::AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
    BufReader<R>: AsyncBufRead,
{
    type Error = std::io::Error;

    fn send(&mut self, item: TxJsonRpcMessage<RoleServer>) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = Arc::clone(&self.write);
        async move {
            let mut bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            let mut w = write.lock().await;
            w.write_all(&bytes).await?;
            w.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let line = self.next_line().await?;
            let mut line: &[u8] = &line;
            line = line.strip_suffix(b"\n").unwrap_or(line);
            line = line.strip_suffix(b"\r").unwrap_or(line);
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
                // A request of a method the protocol defines, whose params did not fit it, is
                // read as a custom request: it is answered here, as the params error it is.
                Ok(JsonRpcMessage::Request(r)) if matches!(&r.request, ClientRequest::CustomRequest(c) if REQUEST_METHODS.contains(&c.method.as_str())) => {
                    if let ClientRequest::CustomRequest(c) = &r.request {
                        self.reply(
                            Some(r.id.clone()),
                            ErrorCode::INVALID_PARAMS,
                            params_error(&c.method, c.params.as_ref()),
                        );
                    }
                }
                Ok(m) => return Some(m),
                Err(e) => self.malformed(line, &e),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_id_is_read_from_the_start_of_a_cut_message() {
        let n = |i| Some(NumberOrString::Number(i));
        assert_eq!(
            leading_id(br#"{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"sk"#),
            n(77)
        );
        assert_eq!(leading_id(br#" { "id" : "a-1" , "x"#), Some(NumberOrString::String("a-1".into())));
        assert_eq!(
            leading_id(br#"{"jsonrpc":"2.0","method":"x","params":{"a":[1,{"id":5}]},"id":9}"#),
            n(9)
        );
        assert_eq!(leading_id(br#"{"jsonrpc":"2.0","params":{"name":"ski"#), None);
        assert_eq!(leading_id(br#"{"id":null,"#), None);
        assert_eq!(leading_id(b"[1,2"), None);
        assert_eq!(leading_id(b""), None);
    }
}
