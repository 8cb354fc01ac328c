//! Which compose project a service belongs to, worked out as compose does, so that every way of
//! naming one service (`compose restart api` in its directory, `compose -p shop restart api`,
//! `compose -f /srv/shop/compose.yaml restart api`) meets one cooldown budget.
//!
//! Compose (compose-go `cli/options.go`, `loader.projectName`) takes the project name from, in
//! order: `-p`; `COMPOSE_PROJECT_NAME` (the gate removes it from the environment, so only a
//! `.env` file can set it); the top-level `name:` of the compose files (the last that has one,
//! normalised); the base name of the project directory (normalised). The project directory is
//! `--project-directory`, else the directory of the first compose file; with no `-f`, compose
//! looks for `compose.yaml` (and the other default names) in the working directory and then in
//! each parent.
//!
//! On the local host the gate reads those files ([`resolve_local`]); a name it cannot read or
//! that needs interpolation it does not do (`name: ${X}`) leaves the project [`Project::Unknown`],
//! and below tier 3 such a call is refused. On a remote host the project is the base name of the
//! directory (`cd /srv/shop && docker compose …`, or an absolute `-f`), and a remote compose
//! file's `name:` or `.env` is not seen (`crate::grammar::compose::resolve_remote`, which needs
//! no file); the files of a remote `compose up` are read over ssh by `crate::remote_facts` and
//! judged with [`judge_read`].
//!
//! Must not: write anything, or run anything.

use std::path::{Path, PathBuf};

use crate::grammar::compose::Judged;
use crate::grammar::compose::{from_dir, lexical, normalize, shown};
use crate::grammar::{ComposeFiles, Invocation, Project, Target};
use crate::sanitize::escape;

/// Compose's default file names, in its order of preference.
pub(crate) const DEFAULT_FILES: &[&str] = &["compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml"];
/// The override file compose adds to a default file found beside it.
pub(crate) const OVERRIDE_FILES: &[&str] = &[
    "compose.override.yml",
    "compose.override.yaml",
    "docker-compose.override.yml",
    "docker-compose.override.yaml",
];
/// Files larger than this are not read: a project name is at the top of a small file.
pub(crate) const MAX_READ: u64 = 1 << 20;

/// Give every compose service target of the call the `container_name:` its compose files set
/// (read on the local host from `cwd`, as compose reads them), so that `compose restart api`
/// and `docker restart shop-api` (`container_name: shop-api`) are one budget. A name the gate
/// cannot read (interpolation, a file it cannot parse) leaves the project unknown: below tier 3
/// such a call is refused. Without compose files there is no name to find.
pub fn name_containers(inv: &mut Invocation, cwd: &Path) {
    for action in &mut inv.actions {
        for t in &mut action.targets {
            if let Target::Service {
                project,
                name,
                files,
                container,
            } = t
                && !matches!(project, Project::Unknown(_))
            {
                match container_name(cwd, files, name) {
                    Ok(c) => *container = c,
                    Err(why) => *project = Project::Unknown(why),
                }
            }
        }
    }
}

/// The `container_name:` of `service` in the compose files a call run in `cwd` with these
/// options reads (the last file that sets it wins, as compose merges them); None when no file
/// sets it or there is no compose file.
pub fn container_name(cwd: &Path, f: &ComposeFiles, service: &str) -> Result<Option<String>, String> {
    let layout = Layout::new(cwd, f);
    let env = layout.env(true)?;
    let files = if !layout.given.is_empty() {
        layout.given.clone()
    } else if env_value(&env, "COMPOSE_FILE").is_some() {
        return Err("COMPOSE_FILE in .env chooses the compose files, so the gate cannot tell the service's container_name".into());
    } else {
        match search(layout.search_from(cwd)) {
            Ok(files) => files,
            Err(_) => return Ok(None),
        }
    };
    let mut name = None;
    for file in &files {
        let Some(text) = read_bounded(file)? else { continue };
        let doc: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(&text).map_err(|e| format!("the compose file {} is not YAML the gate can read ({e})", shown(file)))?;
        match doc
            .get("services")
            .and_then(|s| s.get(service))
            .and_then(|s| s.get("container_name"))
        {
            None | Some(serde_yaml_ng::Value::Null) => {}
            Some(serde_yaml_ng::Value::String(c)) if c.contains('$') => {
                return Err(format!(
                    "`container_name:` of service `{}` in {} uses interpolation the gate does not do",
                    escape(service),
                    shown(file)
                ));
            }
            Some(serde_yaml_ng::Value::String(c)) => name = Some(c.clone()),
            Some(_) => {
                return Err(format!(
                    "`container_name:` of service `{}` in {} is not a plain string",
                    escape(service),
                    shown(file)
                ));
            }
        }
    }
    Ok(name)
}

/// Where compose looks for a call run in `cwd` with these options.
struct Layout {
    /// `--project-directory`, resolved.
    project_dir: Option<PathBuf>,
    /// `-f`, resolved.
    given: Vec<PathBuf>,
    /// Where `.env` is read from: the project directory, else that of the first `-f`, else
    /// the working directory (compose reads it before it looks for default files).
    env_dir: PathBuf,
    /// The `--env-file`s, or `.env` in `env_dir`.
    env_paths: Vec<PathBuf>,
    /// `--env-file` was given: a missing one fails compose.
    explicit_env: bool,
}

impl Layout {
    fn new(cwd: &Path, f: &ComposeFiles) -> Layout {
        let at = |p: &str| lexical(&cwd.join(p));
        let project_dir = f.dir.as_deref().map(at);
        let given: Vec<PathBuf> = f.files.iter().map(|p| at(p)).collect();
        let env_dir = project_dir
            .clone()
            .or_else(|| given.first().and_then(|p| p.parent().map(Path::to_path_buf)))
            .unwrap_or_else(|| cwd.to_path_buf());
        let env_paths = if f.env_files.is_empty() {
            vec![env_dir.join(".env")]
        } else {
            f.env_files.iter().map(|p| at(p)).collect()
        };
        Layout {
            project_dir,
            given,
            env_dir,
            env_paths,
            explicit_env: !f.env_files.is_empty(),
        }
    }

    /// The entries of the env files that exist, with the file each is in. With `strict`, a
    /// `--env-file` that does not exist is an error (compose fails on it).
    fn env(&self, strict: bool) -> Result<Vec<(String, String, PathBuf)>, String> {
        let mut out = Vec::new();
        for p in &self.env_paths {
            match read_bounded(p)? {
                Some(text) => out.extend(dotenv(&text).into_iter().map(|(k, v)| (k, v, p.clone()))),
                None if strict && self.explicit_env => return Err(format!("the env file {} does not exist", shown(p))),
                None => {}
            }
        }
        Ok(out)
    }

    /// Where compose's search for a default file starts.
    fn search_from<'a>(&'a self, cwd: &'a Path) -> &'a Path {
        self.project_dir.as_deref().unwrap_or(cwd)
    }

    /// The project directory compose ends up with: `--project-directory`, else the directory of
    /// the first compose file, else the working directory.
    fn base(&self, files: &[PathBuf], cwd: &Path) -> PathBuf {
        self.project_dir
            .clone()
            .or_else(|| files.first().and_then(|p| p.parent().map(Path::to_path_buf)))
            .unwrap_or_else(|| cwd.to_path_buf())
    }
}

/// The last value of `key` in env entries, with the file it came from.
fn env_value<'a>(env: &'a [(String, String, PathBuf)], key: &str) -> Option<(&'a str, &'a Path)> {
    env.iter()
        .rev()
        .find(|(k, _, _)| k == key)
        .map(|(_, v, p)| (v.as_str(), p.as_path()))
}

/// The project name compose would use for a call run in `cwd` with these options.
pub fn resolve_local(cwd: &Path, f: &ComposeFiles) -> Result<String, String> {
    let layout = Layout::new(cwd, f);
    let env = layout.env(true)?;
    if let Some((v, p)) = env_value(&env, "COMPOSE_PROJECT_NAME").filter(|(v, _)| !v.is_empty()) {
        if v.contains('$') {
            return Err(format!(
                "COMPOSE_PROJECT_NAME in {} uses interpolation the gate does not do",
                shown(p)
            ));
        }
        return Ok(v.to_string());
    }
    let files = if !layout.given.is_empty() {
        layout.given.clone()
    } else if env_value(&env, "COMPOSE_FILE").is_some() {
        return Err("COMPOSE_FILE in .env chooses the compose files; name the project with -p".into());
    } else {
        search(layout.search_from(cwd))?
    };
    let mut name = None;
    for f in &files {
        let text = read_bounded(f)?.ok_or_else(|| format!("the compose file {} does not exist", shown(f)))?;
        let doc: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(&text).map_err(|e| format!("the compose file {} is not YAML the gate can read ({e})", shown(f)))?;
        match doc.get("name") {
            None | Some(serde_yaml_ng::Value::Null) => {}
            Some(serde_yaml_ng::Value::String(s)) if s.contains('$') => {
                return Err(format!("`name:` in {} uses interpolation the gate does not do", shown(f)));
            }
            Some(serde_yaml_ng::Value::String(s)) if !s.is_empty() => name = Some(s.clone()),
            Some(serde_yaml_ng::Value::String(_)) => {}
            Some(_) => return Err(format!("`name:` in {} is not a string", shown(f))),
        }
    }
    if let Some(n) = name.map(|n| normalize(&n)).filter(|n| !n.is_empty()) {
        return Ok(n);
    }
    // With `-f` the project directory is the first given file's, as with the search's.
    from_dir(&layout.base(&files, cwd))
}

/// [`file_marks_with`] with the caller's real permissions (`access(2)`, which uses the real
/// uid and gid: in a hardened install the agent's, not the gate's group).
pub fn file_marks(cwd: &Path, f: &ComposeFiles) -> Result<Judged, String> {
    file_marks_with(cwd, f, &agent_can_change)
}

/// What the files of a local `compose up` ask for, and what of them the agent can change; Err
/// when a file exists but cannot be read or understood. No compose file at all is no finding:
/// compose then fails without starting anything.
///
/// The files are found as compose finds them: `-f` (or `COMPOSE_FILE` in `.env`), else
/// `compose.yaml` and the override beside it, searched from the project directory up. Each is
/// read as compose-go reads it (tags such as `!override` dropped, `<<` merge keys applied) and
/// judged by [`judge_file`].
pub fn file_marks_with(cwd: &Path, f: &ComposeFiles, can_change: &dyn Fn(&Path) -> bool) -> Result<Judged, String> {
    let layout = Layout::new(cwd, f);
    let env = layout.env(false)?;
    let files: Vec<PathBuf> = if !layout.given.is_empty() {
        layout.given.clone()
    } else if let Some((list, _)) = env_value(&env, "COMPOSE_FILE") {
        if list.contains('$') {
            return Err("COMPOSE_FILE in .env uses interpolation the gate does not do".into());
        }
        list.split(':')
            .filter(|p| !p.is_empty())
            .map(|p| lexical(&layout.env_dir.join(p)))
            .collect()
    } else {
        match search(layout.search_from(cwd)) {
            Ok(found) => found,
            Err(_) => return Ok(Judged::default()),
        }
    };
    let base = layout.base(&files, cwd);
    let mut out = Judged::default();
    let mut changeable = |p: &Path, what: &str| {
        if can_change(p) {
            out.changeable.push(format!("{what} {}", shown(p)));
        }
    };
    // Where compose would find an override or `.env` the operator did not write.
    changeable(&base.join("compose.override.yaml"), "the project directory of");
    for p in layout.env_paths.iter().filter(|p| p.exists()) {
        changeable(p, "the env file");
    }
    let mut binds = Vec::new();
    for file in &files {
        let Some(text) = read_bounded(file)? else { continue };
        changeable(file, "the compose file");
        let doc = parse(&text).map_err(|e| format!("the compose file {} {e}", shown(file)))?;
        judge_file(&doc, &base, &mut out.escalates, &mut binds);
    }
    // Where each bind source really is, and whether the agent can put something else there.
    // A build context, Dockerfile or env file is named by its key (`service api: build.context`).
    for (who, src, host) in binds {
        let bind = !who.contains(": ");
        if let Ok(real) = std::fs::canonicalize(&host)
            && real != host
            && crate::grammar::docker::protected_host_path(&real.to_string_lossy())
        {
            let what = if bind {
                format!("{who}: a bind of {src}")
            } else {
                format!("{who} {src}")
            };
            out.escalates.push(format!("{what}, which is {}", shown(&real)));
        }
        if !bind && crate::grammar::docker::protected_host_path(&host.to_string_lossy()) {
            out.escalates.push(format!("{who} {src}"));
        }
        if can_change(&host) {
            let noun = if bind { ": the bind source" } else { "" };
            out.changeable.push(format!("{who}{noun} {}", shown(&host)));
        }
    }
    out.changeable.dedup();
    Ok(out)
}

/// Whether the caller could change what is at `p`: write it, or replace or create it through
/// a directory on its way that the caller can write (a sticky directory such as `/tmp` lets
/// the caller replace only what it owns).
pub fn agent_can_change(p: &Path) -> bool {
    use nix::unistd::{AccessFlags, access};
    use std::os::unix::fs::MetadataExt;
    let uid = nix::unistd::getuid().as_raw();
    if p.symlink_metadata().is_ok() && access(p, AccessFlags::W_OK).is_ok() {
        return true;
    }
    let mut child = p.to_path_buf();
    for dir in p.ancestors().skip(1) {
        if dir.as_os_str().is_empty() {
            break;
        }
        if access(dir, AccessFlags::W_OK | AccessFlags::X_OK).is_ok() {
            let Ok(m) = dir.metadata() else { return true };
            let sticky = m.mode() & 0o1000 != 0;
            let owns_child = child.symlink_metadata().map_or(true, |c| c.uid() == uid);
            if !sticky || owns_child || m.uid() == uid {
                return true;
            }
        }
        child = dir.to_path_buf();
    }
    false
}

/// A compose file as compose-go reads it: YAML, tags dropped (`!override`, `!reset` keep their
/// value), `<<` merge keys applied.
fn parse(text: &str) -> Result<serde_yaml_ng::Value, String> {
    let mut doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(|e| format!("is not YAML the gate can read ({e})"))?;
    untag(&mut doc);
    doc.apply_merge()
        .map_err(|e| format!("has merge keys the gate cannot apply ({e})"))?;
    Ok(doc)
}

fn untag(v: &mut serde_yaml_ng::Value) {
    use serde_yaml_ng::Value as Y;
    if let Y::Tagged(t) = v {
        let inner = std::mem::replace(&mut t.value, Y::Null);
        *v = inner;
        untag(v);
        return;
    }
    match v {
        Y::Sequence(items) => items.iter_mut().for_each(untag),
        Y::Mapping(m) => m.iter_mut().for_each(|(_, x)| untag(x)),
        _ => {}
    }
}

/// What one file's text asks for that `docker run` needs tier 3 for (for the policy's
/// examples: no file system), its relative binds taken from `base`.
pub fn judge_text(text: &str, base: &Path) -> Result<Vec<String>, String> {
    let doc = parse(text)?;
    let mut out = Vec::new();
    judge_file(&doc, base, &mut out, &mut Vec::new());
    Ok(out)
}

/// A bind source of a compose file: who binds it (`service web`), the source as written, and the
/// host path it names.
pub type Bind = (String, String, PathBuf);

/// What one file's text asks for that `docker run` needs tier 3 for, and its bind sources (who,
/// as written, the host path; relative ones taken from `base`). For a remote host's files, which
/// are read over ssh (`crate::remote_facts`), not here.
pub fn judge_read(text: &str, base: &Path) -> Result<(Vec<String>, Vec<Bind>), String> {
    let doc = parse(text)?;
    let mut out = Vec::new();
    let mut binds = Vec::new();
    judge_file(&doc, base, &mut out, &mut binds);
    Ok((out, binds))
}

/// A YAML value compose-go reads as true (`true`, `yes`, `on`, `y`, `1`, in any case), or one
/// that uses interpolation, which the gate does not do.
fn truthy(v: &serde_yaml_ng::Value) -> bool {
    use serde_yaml_ng::Value as Y;
    match v {
        Y::Bool(b) => *b,
        Y::Number(n) => n.as_i64() != Some(0),
        Y::String(s) => s.contains('$') || matches!(s.to_ascii_lowercase().as_str(), "true" | "yes" | "y" | "on" | "1"),
        _ => false,
    }
}

/// Judged per service:
/// - `privileged`, `use_api_socket`, `provider` (compose runs a program on the host), hooks
///   (`post_start`, `pre_stop`) that are privileged;
/// - host or container namespaces (`pid`, `ipc`, `uts`, `userns_mode`, `cgroup`, `network_mode`:
///   `host`, `container:…`, `service:…`);
/// - `cap_add`, `devices`, `device_cgroup_rules`, `gpus`, `volumes_from`, `runtime`,
///   `security_opt` other than `no-new-privileges`;
/// - `extends: {file: …}`, and a build that is privileged, has entitlements or the host network;
/// - a bind of a protected host path (the docker socket, `/`, `/etc`, … as `docker run -v` is
///   judged; a relative source is taken from the project directory).
///
/// And for the file: `include` (other files), volumes with `driver_opts` (a local volume can
/// bind any host path), networks that are the host's, and configs or secrets read from a
/// protected host path. A value that uses interpolation (`${…}`) in any of these is taken as
/// asking for it. Bind sources are collected into `binds` (who, as written, the host path) for
/// checks that need the file system.
fn judge_file(doc: &serde_yaml_ng::Value, base: &Path, out: &mut Vec<String>, binds: &mut Vec<(String, String, PathBuf)>) {
    use serde_yaml_ng::Value as Y;
    let host_path = |src: &str| -> Option<PathBuf> {
        if src.starts_with('/') {
            Some(lexical(Path::new(src)))
        } else if src.starts_with('.') {
            Some(lexical(&base.join(src)))
        } else {
            None
        }
    };
    if doc.get("include").is_some() {
        out.push("include: (other compose files)".into());
    }
    if let Some(Y::Mapping(vols)) = doc.get("volumes") {
        for (name, v) in vols {
            if v.get("driver_opts").is_some() {
                out.push(format!("volume {}: driver_opts", text_of(name)));
            }
        }
    }
    if let Some(Y::Mapping(nets)) = doc.get("networks") {
        for (name, v) in nets {
            let named = v.get("name").map(text_of).unwrap_or_default().to_ascii_lowercase();
            let driver = v.get("driver").map(text_of).unwrap_or_default().to_ascii_lowercase();
            if named == "host" || driver == "host" || named.contains('$') || driver.contains('$') {
                out.push(format!("network {}: the host's network", text_of(name)));
            }
        }
    }
    for kind in ["configs", "secrets"] {
        if let Some(Y::Mapping(items)) = doc.get(kind) {
            for (name, v) in items {
                let Some(file) = v.get("file").map(text_of) else { continue };
                let who = format!("{kind} {}", text_of(name));
                match host_path(&file) {
                    Some(h) if crate::grammar::docker::protected_host_path(&h.to_string_lossy()) => {
                        out.push(format!("{who}: a bind of {file}"));
                    }
                    Some(h) => binds.push((who, file, h)),
                    None => out.push(format!("{who}: a bind of {file}")),
                }
            }
        }
    }
    let Some(Y::Mapping(services)) = doc.get("services") else { return };
    for (name, svc) in services {
        let name = text_of(name);
        let mut say = |what: String| out.push(format!("service {name}: {what}"));
        let set = |k: &str| svc.get(k).filter(|v| !matches!(v, Y::Null));
        for k in ["privileged", "use_api_socket"] {
            if set(k).is_some_and(truthy) {
                say(k.to_string());
            }
        }
        if set("provider").is_some() {
            say("provider (a program compose runs on the host)".into());
        }
        for hook in ["post_start", "pre_stop"] {
            if let Some(Y::Sequence(hooks)) = set(hook)
                && hooks.iter().any(|h| h.get("privileged").is_some_and(truthy))
            {
                say(format!("{hook}: privileged"));
            }
        }
        for k in ["pid", "ipc", "uts", "userns_mode", "cgroup", "network_mode"] {
            if let Some(v) = set(k) {
                let t = text_of(v).to_ascii_lowercase();
                if t == "host" || t.starts_with("host:") || t.starts_with("container:") || t.starts_with("service:") || t.contains('$') {
                    say(format!("{k}: {t}"));
                }
            }
        }
        for k in ["cap_add", "devices", "device_cgroup_rules", "volumes_from", "gpus", "runtime"] {
            if set(k).is_some_and(|v| !matches!(v, Y::Sequence(l) if l.is_empty())) {
                say(k.to_string());
            }
        }
        if let Some(Y::Sequence(opts)) = set("security_opt") {
            let hardening = |t: &str| matches!(t, "no-new-privileges" | "no-new-privileges=true" | "no-new-privileges:true");
            if opts.iter().any(|o| !hardening(&text_of(o))) {
                say("security_opt".into());
            }
        } else if set("security_opt").is_some() {
            say("security_opt".into());
        }
        if let Some(e) = set("extends")
            && e.get("file").is_some()
        {
            say("extends: {file: …} (another compose file)".into());
        }
        // What a service reads from the host when compose builds or starts it: its build
        // context and Dockerfile (a build runs the Dockerfile's steps; the image is what runs),
        // additional build contexts, and env files. Where the agent can change one, it chooses
        // what starts (checked with the binds).
        let mut reads = |key: &str, src: &str, base: &Path| {
            if src.contains('$') {
                out.push(format!("service {name}: {key} {src} (interpolated)"));
            } else if src.contains("://") || src.starts_with("git@") {
                // A remote context: fetched, not local.
            } else {
                let p = if src.starts_with('/') {
                    lexical(Path::new(src))
                } else {
                    lexical(&base.join(src))
                };
                binds.push((format!("service {name}: {key}"), src.to_string(), p));
            }
        };
        match set("build") {
            Some(Y::String(ctx)) => {
                reads("build.context", ctx, base);
                reads("build.dockerfile", "Dockerfile", &base.join(ctx));
            }
            Some(b @ Y::Mapping(_)) => {
                let ctx = b.get("context").map(text_of).unwrap_or_else(|| ".".into());
                reads("build.context", &ctx, base);
                let ctx_dir = if ctx.starts_with('/') {
                    PathBuf::from(&ctx)
                } else {
                    base.join(&ctx)
                };
                if b.get("dockerfile_inline").is_none() {
                    let df = b.get("dockerfile").map(text_of).unwrap_or_else(|| "Dockerfile".into());
                    reads("build.dockerfile", &df, &ctx_dir);
                }
                if let Some(Y::Mapping(extra)) = b.get("additional_contexts") {
                    for (k, v) in extra {
                        reads(&format!("build.additional_contexts.{}", text_of(k)), &text_of(v), base);
                    }
                }
            }
            _ => {}
        }
        let env_files: Vec<String> = match set("env_file") {
            Some(Y::String(f)) => vec![f.clone()],
            Some(Y::Sequence(l)) => l.iter().map(|e| e.get("path").map(text_of).unwrap_or_else(|| text_of(e))).collect(),
            _ => Vec::new(),
        };
        for f in env_files {
            reads("env_file", &f, base);
        }
        let mut say = |what: String| out.push(format!("service {name}: {what}"));
        if let Some(b) = set("build") {
            let network = b.get("network").map(text_of).unwrap_or_default().to_ascii_lowercase();
            if b.get("privileged").is_some_and(truthy) || b.get("entitlements").is_some() || network == "host" || network.contains('$') {
                say("build: privileged, entitlements or the host network".into());
            }
        }
        if let Some(Y::Sequence(vols)) = set("volumes") {
            for v in vols {
                let source = match v {
                    Y::String(spec) => spec.split_once(':').map(|(src, _)| src.to_string()),
                    Y::Mapping(_) => {
                        let kind = v.get("type").map(text_of).unwrap_or_default();
                        (kind == "bind" || kind.contains('$')).then(|| v.get("source").map(text_of).unwrap_or_default())
                    }
                    _ => None,
                };
                let Some(src) = source else { continue };
                // A short-syntax source that is not a path is a named volume.
                if !(src.starts_with('/')
                    || src.starts_with('.')
                    || src.starts_with('~')
                    || src.contains('$')
                    || matches!(v, Y::Mapping(_)))
                {
                    continue;
                }
                match host_path(&src).filter(|_| !src.contains('$')) {
                    Some(h) if !crate::grammar::docker::protected_host_path(&h.to_string_lossy()) => {
                        binds.push((format!("service {name}"), src, h));
                    }
                    // Protected, `~`, interpolated or empty: where it points is the host's.
                    _ => say(format!("a bind of {src}")),
                }
            }
        }
    }
}

/// A YAML scalar as text (`true`, `host`, `3`); anything else as its YAML.
fn text_of(v: &serde_yaml_ng::Value) -> String {
    use serde_yaml_ng::Value as Y;
    match v {
        Y::String(s) => s.clone(),
        Y::Bool(b) => b.to_string(),
        Y::Number(n) => n.to_string(),
        Y::Null => String::new(),
        other => serde_yaml_ng::to_string(other).unwrap_or_default().trim().to_string(),
    }
}

/// Compose's search for a default file: the first default name in `start`, then in each parent.
fn search(start: &Path) -> Result<Vec<PathBuf>, String> {
    let mut dir = Some(start);
    while let Some(d) = dir {
        if let Some(main) = DEFAULT_FILES.iter().map(|n| d.join(n)).find(|p| p.is_file()) {
            let mut files = vec![main];
            files.extend(OVERRIDE_FILES.iter().map(|n| d.join(n)).find(|p| p.is_file()));
            return Ok(files);
        }
        dir = d.parent();
    }
    Err(format!("no compose file in {} or above it", shown(start)))
}

/// A file's text, or None when it does not exist; an error when it cannot be read, is too large
/// or is not UTF-8.
fn read_bounded(p: &Path) -> Result<Option<String>, String> {
    use std::io::Read;
    let f = match std::fs::File::open(p) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {} ({e})", shown(p))),
    };
    let mut buf = Vec::new();
    f.take(MAX_READ + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read {} ({e})", shown(p)))?;
    if buf.len() as u64 > MAX_READ {
        return Err(format!("{} is larger than the gate reads ({} bytes)", shown(p), MAX_READ));
    }
    String::from_utf8(buf).map(Some).map_err(|_| format!("{} is not UTF-8", shown(p)))
}

/// The `KEY=VALUE` lines of a `.env` file (compose's dotenv: `export ` allowed, `#` comments,
/// single or double quotes around the value).
pub(crate) fn dotenv(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        // compose-go's dotenv: an `export` prefix, and `KEY: value` as well as `KEY=value`.
        let line = line.strip_prefix("export").map(str::trim_start).unwrap_or(line);
        let Some(at) = line.find(['=', ':']) else { continue };
        let (k, v) = (&line[..at], &line[at + 1..]);
        let v = v.trim();
        let v = match v.chars().next() {
            Some(q @ ('"' | '\'')) => v[1..].split(q).next().unwrap_or_default().to_string(),
            _ => v.split(" #").next().unwrap_or_default().trim_end().to_string(),
        };
        out.push((k.trim().to_string(), v));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn local(cwd: &Path, dir: Option<&str>, files: &[&str], env_files: &[&str]) -> Result<String, String> {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        resolve_local(
            cwd,
            &ComposeFiles {
                dir: dir.map(String::from),
                files: s(files),
                env_files: s(env_files),
            },
        )
    }

    #[test]
    fn dotenv_reads_composes_forms() {
        let text = "# c\nexport COMPOSE_PROJECT_NAME=\"shop\"\nA = 'x y' \nB=v # note\n\nnoequals\n";
        assert_eq!(
            dotenv(text),
            vec![
                ("COMPOSE_PROJECT_NAME".to_string(), "shop".to_string()),
                ("A".to_string(), "x y".to_string()),
                ("B".to_string(), "v".to_string()),
            ]
        );
    }

    #[test]
    fn the_directory_names_the_project_when_nothing_else_does() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("My-Shop");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("compose.yaml"), "services:\n  api: {image: x}\n").unwrap();
        assert_eq!(local(&d, None, &[], &[]), Ok("my-shop".into()));
        // Found in a parent: the project is the parent's.
        let sub = d.join("deploy/x");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(local(&sub, None, &[], &[]), Ok("my-shop".into()));
        // `-f` in another directory: that directory.
        assert_eq!(local(t.path(), None, &["My-Shop/compose.yaml"], &[]), Ok("my-shop".into()));
        // `--project-directory` wins over the file's directory.
        assert_eq!(local(t.path(), Some("other"), &["My-Shop/compose.yaml"], &[]), Ok("other".into()));
    }

    #[test]
    fn name_in_the_compose_file_then_env_win_over_the_directory() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("work");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("docker-compose.yml"), "name: Shop\nservices: {}\n").unwrap();
        assert_eq!(local(&d, None, &[], &[]), Ok("shop".into()));
        // The override beside the default file is read too; the last name wins.
        std::fs::write(d.join("compose.override.yaml"), "name: shop2\n").unwrap();
        assert_eq!(local(&d, None, &[], &[]), Ok("shop2".into()));
        std::fs::write(d.join(".env"), "COMPOSE_PROJECT_NAME=fromenv\n").unwrap();
        assert_eq!(local(&d, None, &[], &[]), Ok("fromenv".into()));
        // `--env-file` replaces `.env`.
        std::fs::write(d.join("alt.env"), "X=1\n").unwrap();
        assert_eq!(local(&d, None, &[], &["alt.env"]), Ok("shop2".into()));
    }

    #[test]
    fn what_the_gate_cannot_follow_is_unknown() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("work");
        std::fs::create_dir(&d).unwrap();
        assert!(local(&d, None, &[], &[]).unwrap_err().contains("no compose file"));
        std::fs::write(d.join("compose.yaml"), "name: ${PROJ}\n").unwrap();
        assert!(local(&d, None, &[], &[]).unwrap_err().contains("interpolation"));
        std::fs::write(d.join("compose.yaml"), "name: [a]\n").unwrap();
        assert!(local(&d, None, &[], &[]).unwrap_err().contains("not a string"));
        std::fs::write(d.join("compose.yaml"), "name: x\n").unwrap();
        assert!(local(&d, None, &["missing.yaml"], &[]).unwrap_err().contains("does not exist"));
        assert!(local(&d, None, &[], &["missing.env"]).unwrap_err().contains("does not exist"));
        std::fs::write(d.join(".env"), "COMPOSE_FILE=a.yaml:b.yaml\n").unwrap();
        assert!(local(&d, None, &[], &[]).unwrap_err().contains("COMPOSE_FILE"));
    }

    #[test]
    fn compose_files_are_judged_for_what_docker_run_would_need_tier_3_for() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("srv/app");
        std::fs::create_dir_all(&d).unwrap();
        let nobody_writes = |_: &Path| false;
        let escalates = |yaml: &str| {
            std::fs::write(d.join("compose.yaml"), yaml).unwrap();
            file_marks_with(&d, &ComposeFiles::default(), &nobody_writes).map(|j| j.escalates)
        };
        assert_eq!(
            escalates(
                "services:\n  web:\n    image: nginx\n    volumes: [./html:/usr/share/nginx/html:ro, data:/data]\n    security_opt: [no-new-privileges:true]\nvolumes:\n  data: {}\n"
            ),
            Ok(vec![])
        );
        assert_eq!(
            escalates(concat!(
                "services:\n",
                "  a: {privileged: true, pid: host, network_mode: host, cap_add: [SYS_ADMIN]}\n",
                "  b:\n    volumes: [/var/run/docker.sock:/var/run/docker.sock, /:/host]\n",
                "  c:\n    volumes: [{type: bind, source: /etc, target: /x}]\n    devices: [/dev/sda]\n",
                "  d: {privileged: \"${P}\", security_opt: [seccomp=unconfined], extends: {file: base.yaml, service: x}}\n",
                "volumes:\n  v: {driver_opts: {type: none, o: bind, device: /}}\n",
            )),
            Ok(vec![
                "volume v: driver_opts".to_string(),
                "service a: privileged".to_string(),
                "service a: pid: host".to_string(),
                "service a: network_mode: host".to_string(),
                "service a: cap_add".to_string(),
                "service b: a bind of /var/run/docker.sock".to_string(),
                "service b: a bind of /".to_string(),
                "service c: devices".to_string(),
                "service c: a bind of /etc".to_string(),
                "service d: privileged".to_string(),
                "service d: security_opt".to_string(),
                "service d: extends: {file: …} (another compose file)".to_string(),
            ])
        );
        // What compose-go reads that plain YAML does not show: merge keys, tags, YAML 1.1
        // booleans; and the other ways to the host.
        for (yaml, what) in [
            (
                "x-p: &p {privileged: true}\nservices:\n  a: {<<: *p, image: x}\n",
                "service a: privileged",
            ),
            ("services:\n  a: {privileged: !override true}\n", "service a: privileged"),
            ("services:\n  a: {volumes: !override [\"/:/host\"]}\n", "service a: a bind of /"),
            ("services:\n  a: {privileged: yes}\n", "service a: privileged"),
            ("services:\n  a: {privileged: On}\n", "service a: privileged"),
            ("services:\n  a: {use_api_socket: true}\n", "service a: use_api_socket"),
            (
                "services:\n  a: {provider: {type: /bin/sh}}\n",
                "service a: provider (a program compose runs on the host)",
            ),
            (
                "services:\n  a: {post_start: [{command: id, privileged: true}]}\n",
                "service a: post_start: privileged",
            ),
            (
                "services:\n  a: {network_mode: \"service:b\"}\n",
                "service a: network_mode: service:b",
            ),
            (
                "services:\n  a: {build: {context: ., privileged: true}}\n",
                "service a: build: privileged, entitlements or the host network",
            ),
            (
                "services:\n  a: {volumes: [{type: \"${T:-bind}\", source: /, target: /h}]}\n",
                "service a: a bind of /",
            ),
            (
                "networks:\n  hn: {external: true, name: host}\nservices: {}\n",
                "network hn: the host's network",
            ),
            (
                "configs:\n  s: {file: /var/run/docker.sock}\nservices: {}\n",
                "configs s: a bind of /var/run/docker.sock",
            ),
            (
                "secrets:\n  s: {file: /etc/shadow}\nservices: {}\n",
                "secrets s: a bind of /etc/shadow",
            ),
        ] {
            assert_eq!(escalates(yaml), Ok(vec![what.to_string()]), "{yaml}");
        }
        assert!(escalates("services: [").unwrap_err().contains("is not YAML"));
        // A bind through a symlink is judged where it leads.
        std::os::unix::fs::symlink("/", d.join("hostroot")).unwrap();
        assert_eq!(
            escalates("services:\n  a: {volumes: [./hostroot:/host]}\n"),
            Ok(vec!["service a: a bind of ./hostroot, which is /".to_string()])
        );
        // No compose file: compose fails, nothing to judge.
        std::fs::remove_file(d.join("compose.yaml")).unwrap();
        assert_eq!(file_marks_with(&d, &ComposeFiles::default(), &nobody_writes), Ok(Judged::default()));
    }

    #[test]
    fn a_build_context_dockerfile_or_env_file_the_agent_can_change_is_named_by_its_key() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("srv/app");
        std::fs::create_dir_all(d.join("api")).unwrap();
        std::fs::write(
            d.join("compose.yaml"),
            "services:\n  api: {build: {context: ./api, dockerfile: Dockerfile.prod}, env_file: [api.env, {path: extra.env}]}\n  web: {build: ./web}\n",
        )
        .unwrap();
        let changeable = |writable: &[&str]| {
            let writable: Vec<PathBuf> = writable.iter().map(|w| d.join(w)).collect();
            file_marks_with(&d, &ComposeFiles::default(), &|p: &Path| writable.iter().any(|w| w == p))
                .unwrap()
                .changeable
        };
        let shown = |rel: &str| d.join(rel).display().to_string();
        assert_eq!(changeable(&[]), Vec::<String>::new());
        assert_eq!(
            changeable(&["api", "api/Dockerfile.prod", "extra.env", "web/Dockerfile"]),
            vec![
                format!("service api: build.context {}", shown("api")),
                format!("service api: build.dockerfile {}", shown("api/Dockerfile.prod")),
                format!("service api: env_file {}", shown("extra.env")),
                format!("service web: build.dockerfile {}", shown("web/Dockerfile")),
            ]
        );
        // A build context of / sends the host's files to the daemon, as a bind of / would.
        std::fs::write(d.join("compose.yaml"), "services:\n  api: {build: {context: /}}\n").unwrap();
        let j = file_marks_with(&d, &ComposeFiles::default(), &|_: &Path| false).unwrap();
        assert_eq!(j.escalates, vec!["service api: build.context /".to_string()]);
    }

    #[test]
    fn what_the_agent_can_change_is_the_agents_own_container() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("srv/app");
        std::fs::create_dir_all(d.join("data")).unwrap();
        std::fs::write(d.join("compose.yaml"), "services:\n  web: {image: x, volumes: [./data:/data]}\n").unwrap();
        std::fs::write(d.join(".env"), "TAG=1\n").unwrap();
        let changeable = |writable: &[&str]| {
            let writable: Vec<PathBuf> = writable.iter().map(|w| d.join(w)).collect();
            file_marks_with(&d, &ComposeFiles::default(), &|p: &Path| writable.iter().any(|w| w == p))
                .unwrap()
                .changeable
        };
        assert_eq!(changeable(&[]), Vec::<String>::new());
        let shown = |rel: &str| d.join(rel).display().to_string();
        assert_eq!(
            changeable(&["compose.yaml"]),
            vec![format!("the compose file {}", shown("compose.yaml"))]
        );
        assert_eq!(changeable(&[".env"]), vec![format!("the env file {}", shown(".env"))]);
        assert_eq!(
            changeable(&["compose.override.yaml"]),
            vec![format!("the project directory of {}", shown("compose.override.yaml"))]
        );
        assert_eq!(
            changeable(&["data"]),
            vec![format!("service web: the bind source {}", shown("data"))]
        );
        // COMPOSE_FILE in .env (compose-go's `KEY: value` spelling too) chooses the files.
        std::fs::write(d.join("evil.yaml"), "services:\n  web: {image: x, privileged: true}\n").unwrap();
        for env in [
            "COMPOSE_FILE=evil.yaml\n",
            "COMPOSE_FILE: evil.yaml\n",
            "export\tCOMPOSE_FILE=evil.yaml\n",
        ] {
            std::fs::write(d.join(".env"), env).unwrap();
            let j = file_marks_with(&d, &ComposeFiles::default(), &|_: &Path| false).unwrap();
            assert_eq!(j.escalates, vec!["service web: privileged".to_string()], "{env}");
        }
    }

    #[test]
    fn the_real_permission_check_sees_a_sticky_directory() {
        // As root everything is writable; as another user a file in a sticky directory that
        // someone else owns cannot be replaced. Only what this process can observe is asserted.
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("compose.yaml");
        std::fs::write(&f, "services: {}\n").unwrap();
        assert!(agent_can_change(&f), "a file in our own temporary directory");
        assert!(agent_can_change(&t.path().join("missing.yaml")), "creating one there");
        if nix::unistd::getuid().as_raw() != 0 {
            assert!(!agent_can_change(Path::new("/etc/passwd")));
        }
    }
}
