# The commands people run; CI runs `make test` (through .ci/run).
CARGO  ?= cargo
PREFIX ?= $(CURDIR)/demo/prefix
# Every decision is recorded: an installation without an audit log keeps no trail.
AUDIT_LOG ?= $(PREFIX)/var/log/tiershim/audit.jsonl
BIN    := target/x86_64-unknown-linux-gnu/release/tiershim

.PHONY: build test test-deps lint install uninstall demo bench clean

build:
	$(CARGO) build --release

test: test-deps
	$(CARGO) test --all-targets

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

demo: build
	./scripts/demo.sh $(BIN)

bench: build
	$(CARGO) bench --bench gate
	$(CARGO) bench --bench skills

clean:
	$(CARGO) clean
	rm -rf demo
