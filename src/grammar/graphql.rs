//! GraphQL documents (`gh api graphql`, curl to a `…/graphql` endpoint), parsed with a real
//! parser (`apollo-parser`): which operations a document holds and, for mutations, the
//! top-level fields (through inline fragments and fragment spreads) with the literal or
//! variable values of their `input` argument.
//!
//! Text matching would be wrong here: commas are insignificant, `#` starts a comment, several
//! operations may share a document, and a fragment can hide a mutation field. A document with
//! any syntax error, a definition that is not executable, or a spread of an unknown fragment is
//! an error, and the caller treats the request as one it cannot read. Pure; decides nothing.

use std::collections::{BTreeMap, BTreeSet};

use apollo_parser::Parser;
use apollo_parser::cst;

use crate::grammar::Body;

/// Parser limits: a request document is small; anything past these is not one the gate reads.
const RECURSION_LIMIT: usize = 64;
const TOKEN_LIMIT: usize = 20_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operation {
    /// `query` or the `{ … }` shorthand.
    Query,
    Mutation(Vec<MutationField>),
    Subscription,
}

/// One top-level field of a mutation, with its `input` argument as far as literals show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MutationField {
    pub name: String,
    input: Value,
}

/// The parts of a GraphQL value the gate uses.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Value {
    Text(String),
    Variable(String),
    Object(BTreeMap<String, Value>),
    Other,
}

impl MutationField {
    /// The text of `input.<key>`: a string or enum literal, or a variable's value taken from the
    /// request (`variables` object of a JSON body, else a top-level field as `gh api -F` sends).
    pub fn input(&self, key: &str, body: &Body) -> Option<String> {
        match &self.input {
            Value::Object(fields) => match fields.get(key)? {
                Value::Text(t) => Some(t.clone()),
                Value::Variable(v) => variable(v, body).and_then(|j| j.as_str().map(str::to_string)),
                _ => None,
            },
            Value::Variable(v) => variable(v, body)?.get(key)?.as_str().map(str::to_string),
            _ => None,
        }
    }
}

fn variable(name: &str, body: &Body) -> Option<serde_json::Value> {
    let Body::Fields(f) = body else {
        return None;
    };
    if let Some(vars) = body
        .field("variables")
        .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
        && let Some(v) = vars.get(name)
    {
        return Some(v.clone());
    }
    let raw = f.get(name)?;
    // gh sends `-F`/`-f` fields as JSON values; an object arrives here as JSON text.
    Some(serde_json::from_str(raw).unwrap_or_else(|_| serde_json::Value::String(raw.clone())))
}

/// Every operation in `doc`, in order.
pub fn operations(doc: &str) -> Result<Vec<Operation>, String> {
    let tree = Parser::new(doc).recursion_limit(RECURSION_LIMIT).token_limit(TOKEN_LIMIT).parse();
    if let Some(e) = tree.errors().next() {
        return Err(format!("GraphQL syntax error: {}", e.message()));
    }
    let document = tree.document();
    let mut fragments = BTreeMap::new();
    let mut ops = Vec::new();
    for def in document.definitions() {
        match def {
            cst::Definition::FragmentDefinition(f) => {
                let name = f.fragment_name().and_then(|n| n.name()).map(|n| n.text().to_string());
                let (Some(name), Some(set)) = (name, f.selection_set()) else {
                    return Err("GraphQL fragment without a name or selection".into());
                };
                fragments.insert(name, set);
            }
            cst::Definition::OperationDefinition(op) => ops.push(op),
            _ => return Err("GraphQL document with a definition that is not a query, mutation, subscription or fragment".into()),
        }
    }
    if ops.is_empty() {
        return Err("GraphQL document without an operation".into());
    }
    let mut out = Vec::new();
    for op in ops {
        let kind = op.operation_type();
        let is = |f: fn(&cst::OperationType) -> Option<apollo_parser::SyntaxToken>| kind.as_ref().is_some_and(|k| f(k).is_some());
        if is(cst::OperationType::mutation_token) {
            let set = op.selection_set().ok_or("GraphQL mutation without a selection")?;
            let mut fields = Vec::new();
            top_fields(&set, &fragments, &mut BTreeSet::new(), &mut fields)?;
            out.push(Operation::Mutation(fields));
        } else if is(cst::OperationType::subscription_token) {
            out.push(Operation::Subscription);
        } else {
            out.push(Operation::Query);
        }
    }
    Ok(out)
}

/// The top-level fields of a selection set, through inline fragments and fragment spreads.
fn top_fields(
    set: &cst::SelectionSet,
    fragments: &BTreeMap<String, cst::SelectionSet>,
    seen: &mut BTreeSet<String>,
    out: &mut Vec<MutationField>,
) -> Result<(), String> {
    for sel in set.selections() {
        match sel {
            cst::Selection::Field(f) => {
                let name = f.name().map(|n| n.text().to_string()).ok_or("GraphQL field without a name")?;
                let input = f
                    .arguments()
                    .into_iter()
                    .flat_map(|a| a.arguments())
                    .find(|a| a.name().is_some_and(|n| n.text() == "input"))
                    .and_then(|a| a.value())
                    .map_or(Value::Other, |v| value(&v));
                out.push(MutationField { name, input });
            }
            cst::Selection::InlineFragment(i) => {
                if let Some(s) = i.selection_set() {
                    top_fields(&s, fragments, seen, out)?;
                }
            }
            cst::Selection::FragmentSpread(s) => {
                let name = s
                    .fragment_name()
                    .and_then(|n| n.name())
                    .map(|n| n.text().to_string())
                    .ok_or("GraphQL fragment spread without a name")?;
                let Some(body) = fragments.get(&name) else {
                    return Err(format!("GraphQL fragment `{name}` is not defined"));
                };
                // A fragment cycle is invalid GraphQL; stop rather than loop.
                if seen.insert(name.clone()) {
                    top_fields(body, fragments, seen, out)?;
                    seen.remove(&name);
                } else {
                    return Err(format!("GraphQL fragment `{name}` spreads itself"));
                }
            }
        }
    }
    Ok(())
}

fn value(v: &cst::Value) -> Value {
    match v {
        cst::Value::StringValue(s) => Value::Text(String::from(s)),
        cst::Value::EnumValue(e) => e.name().map_or(Value::Other, |n| Value::Text(n.text().to_string())),
        cst::Value::Variable(x) => x.name().map_or(Value::Other, |n| Value::Variable(n.text().to_string())),
        cst::Value::ObjectValue(o) => Value::Object(
            o.object_fields()
                .filter_map(|f| Some((f.name()?.text().to_string(), value(&f.value()?))))
                .collect(),
        ),
        _ => Value::Other,
    }
}

/// Only for the tests: the names of a mutation's fields.
#[cfg(test)]
fn names(op: &Operation) -> Vec<&str> {
    match op {
        Operation::Mutation(f) => f.iter().map(|x| x.name.as_str()).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn queries_in_every_form_are_queries() {
        for doc in [
            "{ viewer { login } }",
            "query { viewer { login } }",
            "query Q($o: String!) { user(login: $o) { name } }",
            "# mutation { mergePullRequest }\n{ viewer { login } }",
            r#"{ search(query: "mutation", type: REPOSITORY, first: 1) { repositoryCount } }"#,
        ] {
            assert_eq!(operations(doc), Ok(vec![Operation::Query]), "{doc}");
        }
    }

    #[test]
    fn mutation_fields_are_found_through_aliases_and_fragments() {
        let ops = operations(
            "mutation { x: mergePullRequest(input: {}) { clientMutationId } ... on Mutation { deleteRef(input: {}) { clientMutationId } } ...F }
             fragment F on Mutation { updateBranchProtectionRule(input: {}) { clientMutationId } }",
        )
        .unwrap();
        assert_eq!(names(&ops[0]), vec!["mergePullRequest", "deleteRef", "updateBranchProtectionRule"]);
        let ops = operations("MUTATION { x }");
        // Keywords are case-sensitive: `MUTATION` is not an operation keyword.
        assert!(ops.is_err());
    }

    #[test]
    fn several_operations_are_all_reported() {
        let ops = operations("query A { viewer { login } } mutation B { addComment(input:{}) { clientMutationId } } subscription C { x }")
            .unwrap();
        assert_eq!(ops.len(), 3);
        assert_eq!(ops[0], Operation::Query);
        assert_eq!(names(&ops[1]), vec!["addComment"]);
        assert_eq!(ops[2], Operation::Subscription);
    }

    #[test]
    fn broken_or_foreign_documents_are_errors() {
        for doc in [
            "",
            "mutation {",
            "{ a } }",
            "type Query { a: Int }",
            "mutation { ...Missing }",
            "mutation { ...A } fragment A on Mutation { ...A }",
            "fragment A on Query { a }",
        ] {
            assert!(operations(doc).is_err(), "{doc:?}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let doc = format!("{}{}", "{ a ".repeat(500), "}".repeat(500));
        assert!(operations(&doc).is_err());
    }
}
