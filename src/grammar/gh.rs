//! PLACEHOLDER grammar for gh, replaced by the real one.
use crate::grammar::Invocation;
use crate::tool::Tool;
pub const PREPEND: &[&str] = &[];
pub fn parse(args: &[String]) -> Invocation {
    Invocation::new(Tool::from_name("gh").unwrap_or(Tool::Gh), args).with_problem("not yet")
}
