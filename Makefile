# The commands people run; CI runs `make test` (through .ci/run).
CARGO  ?= cargo
PREFIX ?= $(CURDIR)/demo/prefix
# Every decision is recorded: an installation without an audit log keeps no trail.
AUDIT_LOG ?= $(PREFIX)/var/log/tiershim/audit.jsonl
# Cargo builds for the host tuple named explicitly (.cargo/config.toml), so the binary sits under
# target/<host tuple>/: x86_64-unknown-linux-gnu, aarch64-unknown-linux-gnu, …
HOST   := $(shell rustc --print host-tuple)
BIN    := target/$(HOST)/release/tiershim

.PHONY: build test test-deps lint install uninstall demo bench bench-profiles clean generate deb hot-text

build:
	$(CARGO) build --release

test: test-deps
	$(CARGO) test --all-targets
	$(CARGO) test -p pulldown-cmark --lib

# Installs what the tests need (Debian packages, as root) when it is missing.
test-deps:
	./scripts/test-deps.sh

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --all-targets -- -D warnings

install: build
	./install.sh --prefix $(PREFIX) --binary $(BIN) --audit-log $(AUDIT_LOG)

# Undoes `make install` (and --harden: owners and modes put back); the audit log is kept.
uninstall:
	./install.sh --uninstall --prefix $(PREFIX)

demo:
	@echo "make demo: building the release binary first (about 3 minutes on 2 idle cores from a clean clone, longer on a busy machine; seconds once built), then the walk-through (under a minute)."
	$(CARGO) build --release
	./scripts/demo.sh $(BIN)

# A Debian package of the release build: target/debian/tiershim_<version>-1_<arch>.deb. cargo-deb
# (pinned in scripts/test-deps.sh) is built into target/test-deps/ the first time. The package
# holds the binary, the man pages, the completions and the install kit (/usr/share/tiershim);
# it runs no maintainer scripts and never hardens.
deb:
	./scripts/test-deps.sh cargo-deb
	target/test-deps/cargo-deb/bin/cargo-deb --locked --target $(HOST) --output target/debian/

# dist/ (man pages, shell completions, the JSON Schema of tiershim.yaml) is generated from the
# code by a test (src/admin/generate.rs), which fails in `make test` when it is stale.
generate:
	TIERSHIM_GENERATE=1 $(CARGO) test --lib admin::generate

# link/hot-text.ld: the functions a gated call runs (recorded under callgrind), which build.rs has
# the linker place together; rerun after large changes (a stale list costs speed, not correctness).
hot-text:
	./scripts/hot-text.py

bench: build
	$(CARGO) bench --bench gate
	$(CARGO) bench --bench skills

# Build time and gate overhead of each release profile (four clean release builds: slow); writes
# the "Release profile" section of docs/PERFORMANCE.md.
bench-profiles:
	./scripts/bench-profiles.sh

clean:
	$(CARGO) clean
	rm -rf demo
