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
//! and below tier 3 such a call is refused. On a remote host it cannot read files: the project is
//! the base name of the directory (`cd /srv/shop && docker compose …`, or an absolute `-f`), and a
//! remote compose file's `name:` or `.env` is not seen ([`resolve_remote`]).
//!
//! Must not: write anything, or run anything.

use std::path::{Component, Path, PathBuf};

use crate::grammar::{ComposeFiles, Invocation, Project, Target};
use crate::sanitize::escape;

/// Compose's default file names, in its order of preference.
const DEFAULT_FILES: &[&str] = &["compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml"];
/// The override file compose adds to a default file found beside it.
const OVERRIDE_FILES: &[&str] = &[
    "compose.override.yml",
    "compose.override.yaml",
    "docker-compose.override.yml",
    "docker-compose.override.yaml",
];
/// Files larger than this are not read: a project name is at the top of a small file.
const MAX_READ: u64 = 1 << 20;

/// Compose's `NormalizeProjectName`: lower-case, keep `[a-z0-9_-]`, trim leading `_` and `-`.
pub fn normalize(s: &str) -> String {
    let kept: String = s
        .to_lowercase()
        .chars()
        .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-'))
        .collect();
    kept.trim_start_matches(['_', '-']).to_string()
}

/// How a project is worked out from `--project-directory`, `-f` and `--env-file`.
pub type Resolver<'a> = &'a dyn Fn(&ComposeFiles) -> Result<String, String>;

/// Replace every [`Project::Implied`] in the call's targets with what `resolve` makes of it.
pub fn resolve_targets(inv: &mut Invocation, resolve: Resolver) {
    for action in &mut inv.actions {
        for t in &mut action.targets {
            if let Target::Service { project, .. } = t
                && let Project::Implied(files) = project
            {
                *project = match resolve(files) {
                    Ok(p) => Project::Named(p),
                    Err(why) => Project::Unknown(why),
                };
            }
        }
    }
}

/// True when some target's project is still to be worked out.
pub fn has_implied(inv: &Invocation) -> bool {
    inv.actions.iter().flat_map(|a| &a.targets).any(|t| {
        matches!(
            t,
            Target::Service {
                project: Project::Implied(_),
                ..
            }
        )
    })
}

/// The project name compose would use for a call run in `cwd` with these options.
pub fn resolve_local(cwd: &Path, dir: &Option<String>, files: &[String], env_files: &[String]) -> Result<String, String> {
    let at = |p: &str| lexical(&cwd.join(p));
    let project_dir = dir.as_deref().map(at);
    // The compose files: as given, or found by compose's search from the project directory up.
    let found: Vec<PathBuf> = if files.is_empty() {
        Vec::new()
    } else {
        files.iter().map(|f| at(f)).collect()
    };
    // `.env`: the `--env-file`s, or `.env` in the project directory, else beside the first
    // `-f`, else the working directory (compose reads it before it looks for default files).
    let env_dir = project_dir
        .clone()
        .or_else(|| found.first().and_then(|f| f.parent().map(Path::to_path_buf)))
        .unwrap_or_else(|| cwd.to_path_buf());
    let env_paths: Vec<PathBuf> = if env_files.is_empty() {
        vec![env_dir.join(".env")]
    } else {
        env_files.iter().map(|f| at(f)).collect()
    };
    let mut from_env = None;
    let mut compose_file_env = false;
    for p in &env_paths {
        let text = match read_bounded(p) {
            Ok(Some(t)) => t,
            // A missing default `.env` is the usual case; a missing `--env-file` fails compose.
            Ok(None) if env_files.is_empty() => continue,
            Ok(None) => return Err(format!("the env file {} does not exist", shown(p))),
            Err(e) => return Err(e),
        };
        for (k, v) in dotenv(&text) {
            match k.as_str() {
                "COMPOSE_PROJECT_NAME" => from_env = Some((v, p.clone())),
                "COMPOSE_FILE" => compose_file_env = true,
                _ => {}
            }
        }
    }
    if let Some((v, p)) = from_env.filter(|(v, _)| !v.is_empty()) {
        if v.contains('$') {
            return Err(format!(
                "COMPOSE_PROJECT_NAME in {} uses interpolation the gate does not do",
                shown(&p)
            ));
        }
        return Ok(v);
    }
    let files = if !found.is_empty() {
        found
    } else if compose_file_env {
        return Err("COMPOSE_FILE in .env chooses the compose files; name the project with -p".into());
    } else {
        search(project_dir.as_deref().unwrap_or(cwd))?
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
    let dir = project_dir.or_else(|| files.first().and_then(|f| f.parent().map(Path::to_path_buf)));
    from_dir(dir.as_deref().unwrap_or(cwd))
}

/// What the compose files of a local `compose up` ask for that `docker run` needs tier 3 or
/// more for, one line each (`service web: privileged`); empty when they ask for none of it.
/// Err when a file exists but cannot be read or understood. No file at all is no finding:
/// compose then fails without starting anything.
///
/// Judged per service: `privileged`, host or container namespaces (`pid`, `ipc`, `uts`,
/// `userns_mode`, `cgroup`, `network_mode: host`), `cap_add`, `devices`,
/// `device_cgroup_rules`, `security_opt` other than `no-new-privileges`, `volumes_from`, and a
/// bind of a protected host path (the docker socket, `/`, `/etc`, … as `docker run -v` is judged;
/// a relative source is taken from the project directory); and for the files, `include` and
/// `extends: {file: …}` (other files the gate does not follow) and volumes with `driver_opts`
/// (a local volume can bind any host path). A value that uses interpolation (`${…}`) in any of
/// these is taken as asking for it.
pub fn file_marks(cwd: &Path, f: &ComposeFiles) -> Result<Vec<String>, String> {
    let at = |p: &str| lexical(&cwd.join(p));
    let project_dir = f.dir.as_deref().map(at);
    let files: Vec<PathBuf> = if f.files.is_empty() {
        match search(project_dir.as_deref().unwrap_or(cwd)) {
            Ok(found) => found,
            Err(_) => return Ok(Vec::new()),
        }
    } else {
        f.files.iter().map(|p| at(p)).collect()
    };
    let base = project_dir
        .or_else(|| files.first().and_then(|p| p.parent().map(Path::to_path_buf)))
        .unwrap_or_else(|| cwd.to_path_buf());
    let mut out = Vec::new();
    for file in &files {
        let Some(text) = read_bounded(file)? else { continue };
        out.extend(judge_text(&text, &base).map_err(|e| format!("the compose file {} {e}", shown(file)))?);
    }
    Ok(out)
}

/// [`file_marks`] for one file's text, its relative binds taken from `base`.
pub fn judge_text(text: &str, base: &Path) -> Result<Vec<String>, String> {
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(|e| format!("is not YAML the gate can read ({e})"))?;
    let mut out = Vec::new();
    judge_file(&doc, base, &mut out);
    Ok(out)
}

/// Mark a `compose up` by what its files ask for: `compose-escalates`, or `compose-unread`
/// when they could not be read.
pub fn mark(a: &mut crate::grammar::Action, found: &Result<Vec<String>, String>) {
    match found {
        Ok(f) if f.is_empty() => {}
        Ok(_) => a.add("compose-escalates"),
        Err(_) => a.add("compose-unread"),
    }
}

fn judge_file(doc: &serde_yaml_ng::Value, base: &Path, out: &mut Vec<String>) {
    use serde_yaml_ng::Value as Y;
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
    let Some(Y::Mapping(services)) = doc.get("services") else { return };
    for (name, svc) in services {
        let name = text_of(name);
        let mut say = |what: String| out.push(format!("service {name}: {what}"));
        let set = |k: &str| svc.get(k).filter(|v| !matches!(v, Y::Null));
        let interpolated = |v: &Y| text_of(v).contains('$');
        if let Some(v) = set("privileged")
            && (matches!(v, Y::Bool(true)) || interpolated(v) || text_of(v).eq_ignore_ascii_case("true"))
        {
            say("privileged".into());
        }
        for k in ["pid", "ipc", "uts", "userns_mode", "cgroup"] {
            if let Some(v) = set(k) {
                let t = text_of(v).to_ascii_lowercase();
                if t == "host" || t.starts_with("host:") || t.starts_with("container:") || t.starts_with("service:") || t.contains('$') {
                    say(format!("{k}: {t}"));
                }
            }
        }
        if let Some(v) = set("network_mode") {
            let t = text_of(v).to_ascii_lowercase();
            if t == "host" || t.contains('$') {
                say(format!("network_mode: {t}"));
            }
        }
        for k in ["cap_add", "devices", "device_cgroup_rules", "volumes_from"] {
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
        if let Some(Y::Sequence(vols)) = set("volumes") {
            for v in vols {
                let source = match v {
                    Y::String(spec) => spec.split_once(':').map(|(src, _)| src.to_string()),
                    Y::Mapping(_) => match v.get("type").map(text_of).as_deref() {
                        Some("bind") => Some(v.get("source").map(text_of).unwrap_or_default()),
                        _ => None,
                    },
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
                let host = if src.starts_with('/') {
                    src.clone()
                } else if src.starts_with('.') {
                    lexical(&base.join(&src)).to_string_lossy().into_owned()
                } else {
                    // `~` and interpolation: where it points is not known here.
                    String::new()
                };
                if host.is_empty() || crate::grammar::docker::protected_host_path(&host) {
                    say(format!("a bind of {src}"));
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

/// The project name on a remote host, from what the command shows: `-p` is handled by the
/// grammar; here the directory is `--project-directory`, else that of the first `-f`, else the
/// `cd` in front of the command. Relative paths are taken from the `cd`.
pub fn resolve_remote(cd: Option<&str>, dir: &Option<String>, files: &[String]) -> Result<String, String> {
    let join = |p: &str| -> Option<PathBuf> {
        if p.starts_with('/') {
            Some(lexical(Path::new(p)))
        } else {
            cd.map(|c| lexical(&Path::new(c).join(p)))
        }
    };
    let unknown = || {
        "on a remote host the gate cannot tell the compose project; name it with -p, or cd into its directory in front (cd /srv/shop && docker compose …)"
            .to_string()
    };
    let project_dir = match (dir, files.first()) {
        (Some(d), _) => join(d).ok_or_else(unknown)?,
        (None, Some(f)) => join(f).and_then(|f| f.parent().map(Path::to_path_buf)).ok_or_else(unknown)?,
        (None, None) => lexical(Path::new(cd.ok_or_else(unknown)?)),
    };
    from_dir(&project_dir).map_err(|_| unknown())
}

/// The normalised base name of a project directory.
fn from_dir(dir: &Path) -> Result<String, String> {
    match dir.components().next_back() {
        Some(Component::Normal(n)) => {
            let n = normalize(&n.to_string_lossy());
            if n.is_empty() {
                Err(format!("the directory {} gives no compose project name", shown(dir)))
            } else {
                Ok(n)
            }
        }
        _ => Err(format!("the directory {} gives no compose project name", shown(dir))),
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
fn dotenv(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").map(str::trim_start).unwrap_or(line);
        let Some((k, v)) = line.split_once('=') else { continue };
        let v = v.trim();
        let v = match v.chars().next() {
            Some(q @ ('"' | '\'')) => v[1..].split(q).next().unwrap_or_default().to_string(),
            _ => v.split(" #").next().unwrap_or_default().trim_end().to_string(),
        };
        out.push((k.trim().to_string(), v));
    }
    out
}

/// `.` and `..` resolved by text, as compose does with `filepath.Abs`/`Clean`.
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn shown(p: &Path) -> String {
    escape(&p.to_string_lossy()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn local(cwd: &Path, dir: Option<&str>, files: &[&str], env_files: &[&str]) -> Result<String, String> {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        resolve_local(cwd, &dir.map(String::from), &s(files), &s(env_files))
    }

    #[test]
    fn normalize_is_composes() {
        assert_eq!(normalize("My App.v2"), "myappv2");
        assert_eq!(normalize("__-shop"), "shop");
        assert_eq!(normalize("web_1-x"), "web_1-x");
        assert_eq!(normalize("ÄÖ"), "");
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
        let marks = |yaml: &str| {
            std::fs::write(d.join("compose.yaml"), yaml).unwrap();
            file_marks(&d, &ComposeFiles::default())
        };
        assert_eq!(
            marks(
                "services:\n  web:\n    image: nginx\n    volumes: [./html:/usr/share/nginx/html:ro, data:/data]\n    security_opt: [no-new-privileges:true]\nvolumes:\n  data: {}\n"
            ),
            Ok(vec![])
        );
        assert_eq!(
            marks(concat!(
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
        assert!(marks("services: [").unwrap_err().contains("is not YAML"));
        // No compose file: compose fails, nothing to judge.
        std::fs::remove_file(d.join("compose.yaml")).unwrap();
        assert_eq!(file_marks(&d, &ComposeFiles::default()), Ok(vec![]));
    }

    #[test]
    fn remote_projects_come_from_the_cd_or_an_absolute_path() {
        let r = |cd, dir: Option<&str>, files: &[&str]| {
            resolve_remote(cd, &dir.map(String::from), &files.iter().map(|x| x.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(r(Some("/srv/media"), None, &[]), Ok("media".into()));
        assert_eq!(r(Some("apps/Media"), None, &[]), Ok("media".into()));
        assert_eq!(r(None, None, &["/srv/shop/compose.yaml"]), Ok("shop".into()));
        assert_eq!(r(Some("/srv"), None, &["shop/compose.yaml"]), Ok("shop".into()));
        assert_eq!(r(Some("/srv/x"), Some("../shop"), &[]), Ok("shop".into()));
        assert!(r(None, None, &[]).unwrap_err().contains("name it with -p"));
        assert!(r(None, None, &["compose.yaml"]).is_err());
        assert!(r(Some("/"), None, &[]).is_err());
        assert!(r(Some("/srv/x"), None, &["../compose.yaml"]).is_ok());
        assert!(r(Some(".."), None, &[]).is_err());
    }
}
