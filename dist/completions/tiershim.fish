# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_tiershim_global_optspecs
    string join \n h/help V/version
end

function __fish_tiershim_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_tiershim_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_tiershim_using_subcommand
    set -l cmd (__fish_tiershim_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c tiershim -n "__fish_tiershim_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tiershim -n "__fish_tiershim_needs_command" -s V -l version -d 'Print version'
complete -c tiershim -n "__fish_tiershim_needs_command" -f -a "explain" -d 'Print the decision the gate would make for a call, without running anything'
complete -c tiershim -n "__fish_tiershim_needs_command" -f -a "policy" -d 'Policy tools'
complete -c tiershim -n "__fish_tiershim_needs_command" -f -a "shell" -d 'Start the restricted shell (rbash) of an installed tier: PATH is the tier directory only'
complete -c tiershim -n "__fish_tiershim_needs_command" -f -a "launch" -d 'Start an agent (Claude Code) in its tier, as root: checks the install and the shell Claude Code will take, sets up the kernel fence and the tier\'s managed settings, then runs the command as the agent\'s user with a clean environment. Refuses (78) on any fault'
complete -c tiershim -n "__fish_tiershim_needs_command" -f -a "check" -d 'Parse and validate what the gate reads, like `visudo -c`: each tier\'s tiershim.yaml, the policy directory, every skill; `file:line:column:` for each fault; exit 0 or 78'
complete -c tiershim -n "__fish_tiershim_needs_command" -f -a "doctor" -d 'Check an installation: links, config, real tools out of the agent\'s reach, passthrough tools, permissions, audit log, policy. A summary (one line per tool across the tiers, one per part) and then one line per check; `--json`; exit 0 only when all hold'
complete -c tiershim -n "__fish_tiershim_needs_command" -f -a "inventory" -d 'The session tool inventory: MCP servers, CLIs and what the gate allows, per domain'
complete -c tiershim -n "__fish_tiershim_needs_command" -f -a "audit" -d 'Summarise an audit log: counts, refusals, scope violations, resets, anything odd'
complete -c tiershim -n "__fish_tiershim_needs_command" -f -a "cooldown" -d 'Restart and redeploy budgets per service: counts in the window and when the next call is allowed; `reset SERVICE` empties one service\'s counts (operators only)'
complete -c tiershim -n "__fish_tiershim_needs_command" -f -a "skills" -d 'The skills an install reads: list, show one, validate'
complete -c tiershim -n "__fish_tiershim_needs_command" -f -a "mcp" -d 'Serve the skills over MCP on stdio, for agents without native skill support'
complete -c tiershim -n "__fish_tiershim_needs_command" -f -a "instructions" -d 'Print the guide to using skills that `tiershim mcp` gives its clients'
complete -c tiershim -n "__fish_tiershim_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tiershim -n "__fish_tiershim_using_subcommand explain" -l config -d 'The tiershim.yaml of the tier to judge as (tier ceiling, pinned env, policy, skills, real tools), read and trusted as that tier\'s gate reads it. Without it: the tier directory of the installation (--prefix, default: the one this binary belongs to) for --tier (else CLAUDEOPS_TIER, else tier 1); without an installation, the embedded policy and a ceiling of 3' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand explain" -l prefix -d 'The installation whose tier directory to judge with (default: the one this binary belongs to)' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand explain" -l tier -d 'The agent\'s tier (as CLAUDEOPS_TIER would set it, and the installed tier directory to judge with); default: this environment\'s' -r
complete -c tiershim -n "__fish_tiershim_using_subcommand explain" -l cwd -d 'The working directory of the call (a scope check runs git there; local files are checked against it). Default: this one' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand explain" -l user -d 'With --fence: the agent\'s account, whose home holds the state the fence keeps writable' -r
complete -c tiershim -n "__fish_tiershim_using_subcommand explain" -l dry-run -d 'Judge as if dry-run were on'
complete -c tiershim -n "__fish_tiershim_using_subcommand explain" -l json -d 'Print one JSON object'
complete -c tiershim -n "__fish_tiershim_using_subcommand explain" -l fence -d 'Print the kernel fence of --config\'s tier instead of judging a call: the Landlock ruleset (writable and read-only paths) for the agent\'s user named by --user (default: the caller)'
complete -c tiershim -n "__fish_tiershim_using_subcommand explain" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand policy; and not __fish_seen_subcommand_from check doc help" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand policy; and not __fish_seen_subcommand_from check doc help" -f -a "check" -d 'Load a policy (the embedded default, or DIR), run every rule\'s examples, vet the passthrough list, and report'
complete -c tiershim -n "__fish_tiershim_using_subcommand policy; and not __fish_seen_subcommand_from check doc help" -f -a "doc" -d 'Print what a policy can say about a tool (the verbs and marks its grammar makes, with their meanings) and the shipped policy\'s rules, with the rules the gate applies itself'
complete -c tiershim -n "__fish_tiershim_using_subcommand policy; and not __fish_seen_subcommand_from check doc help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tiershim -n "__fish_tiershim_using_subcommand policy; and __fish_seen_subcommand_from check" -l passthrough -d 'A passthrough list to vet (the format of shims/passthrough). Default: the shipped list' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand policy; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand policy; and __fish_seen_subcommand_from doc" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "check" -d 'Load a policy (the embedded default, or DIR), run every rule\'s examples, vet the passthrough list, and report'
complete -c tiershim -n "__fish_tiershim_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "doc" -d 'Print what a policy can say about a tool (the verbs and marks its grammar makes, with their meanings) and the shipped policy\'s rules, with the rules the gate applies itself'
complete -c tiershim -n "__fish_tiershim_using_subcommand policy; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tiershim -n "__fish_tiershim_using_subcommand shell" -l tier -d 'The tier whose directory becomes the shell\'s whole PATH' -r
complete -c tiershim -n "__fish_tiershim_using_subcommand shell" -l prefix -d 'The installation (default: the one this binary belongs to, `<prefix>/bin/tiershim`)' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand shell" -l keep-env -d 'Also pass this variable from the caller\'s environment (repeatable). PATH, SHELL, ENV, BASH_ENV, CLAUDEOPS_TIER, loader (LD_*) and shell-behaviour variables cannot be kept' -r
complete -c tiershim -n "__fish_tiershim_using_subcommand shell" -s l -l login -d 'Accepted for harnesses that start a login shell (`-l -c CMD`). The tier profile is always read; /etc/profile and ~/.bash_profile never are'
complete -c tiershim -n "__fish_tiershim_using_subcommand shell" -s c -d 'Run the first argument as a command line and exit with its status (as `bash -c`). Claude Code\'s wrapped form of a Bash tool call is unwrapped first (see docs/claude-code.md)'
complete -c tiershim -n "__fish_tiershim_using_subcommand shell" -l version -d 'Print rbash\'s version and exit (what a harness runs to check that this is a shell)'
complete -c tiershim -n "__fish_tiershim_using_subcommand shell" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand launch" -l tier -d 'The tier the agent runs at (its directory\'s tiershim.yaml must say the same)' -r
complete -c tiershim -n "__fish_tiershim_using_subcommand launch" -l user -d 'The agent\'s account (name or uid): not root; it keeps its primary group only' -r
complete -c tiershim -n "__fish_tiershim_using_subcommand launch" -l prefix -d 'The installation (default: the one this binary belongs to, `<prefix>/bin/tiershim`)' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand launch" -l keep-env -d 'Pass this variable from the caller\'s environment (repeatable), e.g. ANTHROPIC_API_KEY. What the launch sets itself, and loader and shell variables, cannot be kept' -r
complete -c tiershim -n "__fish_tiershim_using_subcommand launch" -l env -d 'Set this variable for the agent (repeatable), with the same limits as --keep-env' -r
complete -c tiershim -n "__fish_tiershim_using_subcommand launch" -l system-path -d 'As `tiershim doctor --system-path`: the directories searched for other copies of the real tools the agent\'s user could run without the gate (default: the standard PATH and PostgreSQL\'s directories)' -r
complete -c tiershim -n "__fish_tiershim_using_subcommand launch" -l cwd -d 'The agent\'s working directory (default: the caller\'s)' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand launch" -l check -d 'Make every check and print the fence, the managed settings and the environment the agent would get; start nothing'
complete -c tiershim -n "__fish_tiershim_using_subcommand launch" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand check" -l config -d 'A tier\'s tiershim.yaml to check, with the policy directory and the skills it names (repeatable). Default, when no --policy or --skills is given either: every tier of the installation this binary belongs to' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand check" -l prefix -d 'The installation whose tiers to check (default: the one this binary belongs to)' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand check" -l policy -d 'A policy directory to check on its own, as `policy:` would name it (repeatable)' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand check" -l skills -d 'A skills directory to check on its own (repeatable)' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand check" -l json -d 'Print one JSON object'
complete -c tiershim -n "__fish_tiershim_using_subcommand check" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand doctor" -l config -d 'One tier\'s tiershim.yaml (checks that tier directory only)' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand doctor" -l prefix -d 'The installation (default: the one this binary belongs to); checks every tier in it' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand doctor" -l user -d 'The agent\'s account (name or uid), whose reach is checked. Default: the caller; for root, any unprivileged user' -r
complete -c tiershim -n "__fish_tiershim_using_subcommand doctor" -l system-path -d 'Directories (colon-separated) searched for other copies of the real tools, which the agent\'s user could run without the gate. Default: the standard PATH (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin) and PostgreSQL\'s /usr/lib/postgresql/*/bin' -r
complete -c tiershim -n "__fish_tiershim_using_subcommand doctor" -l json -d 'Print one JSON object: the summary and every finding'
complete -c tiershim -n "__fish_tiershim_using_subcommand doctor" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand inventory" -l config -d 'The tier\'s tiershim.yaml (ceiling, real tools, mcp_configs, inventory path). Without it: ceiling 3, no MCP configs, and the real tools found on this PATH' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand inventory" -l write -d 'Write the inventory as JSON: to FILE, or to the config\'s `inventory:` path. The session entrypoint runs this once; the gate reads the file and never rebuilds it' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand inventory" -l json -d 'Print the inventory as JSON instead of a table'
complete -c tiershim -n "__fish_tiershim_using_subcommand inventory" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand audit" -l config -d 'A tiershim.yaml whose audit_log to read, and whose installed binary is the expected decider' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand audit" -l since -d 'Only decisions at or after T: an RFC 3339 time (2026-11-22T10:00:00Z) or an age (90m, 4h, 2d)' -r
complete -c tiershim -n "__fish_tiershim_using_subcommand audit" -l json -d 'Print one JSON object'
complete -c tiershim -n "__fish_tiershim_using_subcommand audit" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand cooldown; and not __fish_seen_subcommand_from reset help" -l config -d 'A tier\'s tiershim.yaml naming `cooldown_state:`. Default: the installation this binary belongs to (the first of tier3, tier2, tier1 whose config names one)' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand cooldown; and not __fish_seen_subcommand_from reset help" -l json -d 'Print one JSON object'
complete -c tiershim -n "__fish_tiershim_using_subcommand cooldown; and not __fish_seen_subcommand_from reset help" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand cooldown; and not __fish_seen_subcommand_from reset help" -f -a "reset" -d 'Empty a service\'s restart and redeployment counts (an operator\'s command; refused from inside an agent\'s tier shell)'
complete -c tiershim -n "__fish_tiershim_using_subcommand cooldown; and not __fish_seen_subcommand_from reset help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tiershim -n "__fish_tiershim_using_subcommand cooldown; and __fish_seen_subcommand_from reset" -l config -d 'A tier\'s tiershim.yaml naming `cooldown_state:`. Default: the installation this binary belongs to (the first of tier3, tier2, tier1 whose config names one)' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand cooldown; and __fish_seen_subcommand_from reset" -l json -d 'Print one JSON object'
complete -c tiershim -n "__fish_tiershim_using_subcommand cooldown; and __fish_seen_subcommand_from reset" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand cooldown; and __fish_seen_subcommand_from help" -f -a "reset" -d 'Empty a service\'s restart and redeployment counts (an operator\'s command; refused from inside an agent\'s tier shell)'
complete -c tiershim -n "__fish_tiershim_using_subcommand cooldown; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and not __fish_seen_subcommand_from list show validate help" -l config -d 'The tiershim.yaml whose skills to read (its `skills:`). Default: the shipped skills' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and not __fish_seen_subcommand_from list show validate help" -l skills-dir -d 'Read the skills `tiershim mcp --skills-dir DIR` serves: every SKILL.md at any depth (absolute; repeatable; an earlier directory wins for a skill found twice, and `list` shows the copies it shadows)' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and not __fish_seen_subcommand_from list show validate help" -l json -d 'Print JSON'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and not __fish_seen_subcommand_from list show validate help" -l agent-dirs -d 'Read the skills `tiershim mcp` serves without --config or --skills-dir: ./.agent/skills, ~/.agent/skills, ./.claude/skills, ~/.claude/skills, the first copy of a skill winning'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and not __fish_seen_subcommand_from list show validate help" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and not __fish_seen_subcommand_from list show validate help" -f -a "list" -d 'Every skill found, where, and which copy each repository uses'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and not __fish_seen_subcommand_from list show validate help" -f -a "show" -d 'One skill\'s parsed sections, Tier Requirement, path patterns and findings'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and not __fish_seen_subcommand_from list show validate help" -f -a "validate" -d 'Lint every skill; exit 78 when one has an error that would refuse calls that need it'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and not __fish_seen_subcommand_from list show validate help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from list" -l config -d 'The tiershim.yaml whose skills to read (its `skills:`). Default: the shipped skills' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from list" -l skills-dir -d 'Read the skills `tiershim mcp --skills-dir DIR` serves: every SKILL.md at any depth (absolute; repeatable; an earlier directory wins for a skill found twice, and `list` shows the copies it shadows)' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from list" -l json -d 'Print JSON'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from list" -l agent-dirs -d 'Read the skills `tiershim mcp` serves without --config or --skills-dir: ./.agent/skills, ~/.agent/skills, ./.claude/skills, ~/.claude/skills, the first copy of a skill winning'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from show" -l config -d 'The tiershim.yaml whose skills to read (its `skills:`). Default: the shipped skills' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from show" -l skills-dir -d 'Read the skills `tiershim mcp --skills-dir DIR` serves: every SKILL.md at any depth (absolute; repeatable; an earlier directory wins for a skill found twice, and `list` shows the copies it shadows)' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from show" -l json -d 'Print JSON'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from show" -l agent-dirs -d 'Read the skills `tiershim mcp` serves without --config or --skills-dir: ./.agent/skills, ~/.agent/skills, ./.claude/skills, ~/.claude/skills, the first copy of a skill winning'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from validate" -l config -d 'The tiershim.yaml whose skills to read (its `skills:`). Default: the shipped skills' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from validate" -l skills-dir -d 'Read the skills `tiershim mcp --skills-dir DIR` serves: every SKILL.md at any depth (absolute; repeatable; an earlier directory wins for a skill found twice, and `list` shows the copies it shadows)' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from validate" -l json -d 'Print JSON'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from validate" -l agent-dirs -d 'Read the skills `tiershim mcp` serves without --config or --skills-dir: ./.agent/skills, ~/.agent/skills, ./.claude/skills, ~/.claude/skills, the first copy of a skill winning'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from validate" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from help" -f -a "list" -d 'Every skill found, where, and which copy each repository uses'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from help" -f -a "show" -d 'One skill\'s parsed sections, Tier Requirement, path patterns and findings'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from help" -f -a "validate" -d 'Lint every skill; exit 78 when one has an error that would refuse calls that need it'
complete -c tiershim -n "__fish_tiershim_using_subcommand skills; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tiershim -n "__fish_tiershim_using_subcommand mcp" -l config -d 'Serve this install\'s skills (its `skills:`): the repository holding the working directory first, then the baseline, then the other repositories. Its `tier` is the session\'s ceiling (3 without --config), which CLAUDEOPS_TIER lowers as in the gate' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand mcp" -l skills-dir -d 'Serve every SKILL.md at any depth of this directory too (absolute; repeatable; after the install\'s; an earlier one wins for a skill found twice). Without --config and --skills-dir: ./.agent/skills, ~/.agent/skills, ./.claude/skills, ~/.claude/skills, in that order' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand mcp" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand instructions" -l config -d 'Serve this install\'s skills (its `skills:`): the repository holding the working directory first, then the baseline, then the other repositories. Its `tier` is the session\'s ceiling (3 without --config), which CLAUDEOPS_TIER lowers as in the gate' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand instructions" -l skills-dir -d 'Serve every SKILL.md at any depth of this directory too (absolute; repeatable; after the install\'s; an earlier one wins for a skill found twice). Without --config and --skills-dir: ./.agent/skills, ~/.agent/skills, ./.claude/skills, ~/.claude/skills, in that order' -r -F
complete -c tiershim -n "__fish_tiershim_using_subcommand instructions" -l no-xml -d 'Print the guide bare, without the <skills-mcp-instructions> tags around it'
complete -c tiershim -n "__fish_tiershim_using_subcommand instructions" -s h -l help -d 'Print help'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and not __fish_seen_subcommand_from explain policy shell launch check doctor inventory audit cooldown skills mcp instructions help" -f -a "explain" -d 'Print the decision the gate would make for a call, without running anything'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and not __fish_seen_subcommand_from explain policy shell launch check doctor inventory audit cooldown skills mcp instructions help" -f -a "policy" -d 'Policy tools'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and not __fish_seen_subcommand_from explain policy shell launch check doctor inventory audit cooldown skills mcp instructions help" -f -a "shell" -d 'Start the restricted shell (rbash) of an installed tier: PATH is the tier directory only'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and not __fish_seen_subcommand_from explain policy shell launch check doctor inventory audit cooldown skills mcp instructions help" -f -a "launch" -d 'Start an agent (Claude Code) in its tier, as root: checks the install and the shell Claude Code will take, sets up the kernel fence and the tier\'s managed settings, then runs the command as the agent\'s user with a clean environment. Refuses (78) on any fault'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and not __fish_seen_subcommand_from explain policy shell launch check doctor inventory audit cooldown skills mcp instructions help" -f -a "check" -d 'Parse and validate what the gate reads, like `visudo -c`: each tier\'s tiershim.yaml, the policy directory, every skill; `file:line:column:` for each fault; exit 0 or 78'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and not __fish_seen_subcommand_from explain policy shell launch check doctor inventory audit cooldown skills mcp instructions help" -f -a "doctor" -d 'Check an installation: links, config, real tools out of the agent\'s reach, passthrough tools, permissions, audit log, policy. A summary (one line per tool across the tiers, one per part) and then one line per check; `--json`; exit 0 only when all hold'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and not __fish_seen_subcommand_from explain policy shell launch check doctor inventory audit cooldown skills mcp instructions help" -f -a "inventory" -d 'The session tool inventory: MCP servers, CLIs and what the gate allows, per domain'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and not __fish_seen_subcommand_from explain policy shell launch check doctor inventory audit cooldown skills mcp instructions help" -f -a "audit" -d 'Summarise an audit log: counts, refusals, scope violations, resets, anything odd'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and not __fish_seen_subcommand_from explain policy shell launch check doctor inventory audit cooldown skills mcp instructions help" -f -a "cooldown" -d 'Restart and redeploy budgets per service: counts in the window and when the next call is allowed; `reset SERVICE` empties one service\'s counts (operators only)'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and not __fish_seen_subcommand_from explain policy shell launch check doctor inventory audit cooldown skills mcp instructions help" -f -a "skills" -d 'The skills an install reads: list, show one, validate'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and not __fish_seen_subcommand_from explain policy shell launch check doctor inventory audit cooldown skills mcp instructions help" -f -a "mcp" -d 'Serve the skills over MCP on stdio, for agents without native skill support'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and not __fish_seen_subcommand_from explain policy shell launch check doctor inventory audit cooldown skills mcp instructions help" -f -a "instructions" -d 'Print the guide to using skills that `tiershim mcp` gives its clients'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and not __fish_seen_subcommand_from explain policy shell launch check doctor inventory audit cooldown skills mcp instructions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and __fish_seen_subcommand_from policy" -f -a "check" -d 'Load a policy (the embedded default, or DIR), run every rule\'s examples, vet the passthrough list, and report'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and __fish_seen_subcommand_from policy" -f -a "doc" -d 'Print what a policy can say about a tool (the verbs and marks its grammar makes, with their meanings) and the shipped policy\'s rules, with the rules the gate applies itself'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and __fish_seen_subcommand_from cooldown" -f -a "reset" -d 'Empty a service\'s restart and redeployment counts (an operator\'s command; refused from inside an agent\'s tier shell)'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and __fish_seen_subcommand_from skills" -f -a "list" -d 'Every skill found, where, and which copy each repository uses'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and __fish_seen_subcommand_from skills" -f -a "show" -d 'One skill\'s parsed sections, Tier Requirement, path patterns and findings'
complete -c tiershim -n "__fish_tiershim_using_subcommand help; and __fish_seen_subcommand_from skills" -f -a "validate" -d 'Lint every skill; exit 78 when one has an error that would refuse calls that need it'
