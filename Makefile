# conduit-bb: a Lua C module for Slurm's burst_buffer/lua and switch/lua.
#
#   make                      build/lua5.4/conduit_bb.so and build/conduit-bb
#   make LUA_VERSION=5.1      build/lua5.1/conduit_bb.so (5.2, 5.3 likewise)
#   make check                install test dependencies, build, run every test
#   make check-fast           the same without a real Slurm (under 5 minutes)
#   make e2e SLURM=24.11      the end-to-end suite on one Slurm (26.05, 24.11-lua5.4,
#                             25.05-lua5.3, 25.11-lua5.4, 26.05-switch)
#   make demo                 stage data through a real Slurm 24.11 (needs root)
#   make install DESTDIR=... PREFIX=... [LUA_VERSION=...]
#   make fuzz [FUZZ_SECONDS=600] run the libFuzzer target for 10 min (clang)
#   make switch-plugin SLURM_SRC=<configured Slurm 26.05 tree>
#                             build/switch_lua/: the switch/lua plugin for
#                             that very Slurm, and its helper
#   make rpm [SLURM_SRC=...]  the RPM; with SLURM_SRC also conduit-bb-switch-lua
#   make deb                  the Debian package (deb/build.sh)

VERSION      := 0.1.0
B            := build
GEN          := $(B)/gen
LUA_VERSION  ?= 5.4
LUA_PC       ?= lua$(LUA_VERSION)
PKG_CONFIG   ?= pkg-config
CC           ?= cc

PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
DOCDIR       ?= $(PREFIX)/share/doc/conduit-bb
MANDIR       ?= $(PREFIX)/share/man
SYSCONFDIR   ?= /etc
SLURM_CONFDIR ?= $(SYSCONFDIR)/slurm
# Lua's default package.cpath looks in $(PREFIX)/lib/lua/<version>.
LUA_CMOD_DIR ?= $(PREFIX)/lib/lua/$(LUA_VERSION)

LUA_CFLAGS   ?= $(shell $(PKG_CONFIG) --cflags $(LUA_PC) 2>/dev/null)
LUA_LIBS     ?= $(shell $(PKG_CONFIG) --libs $(LUA_PC) 2>/dev/null)
# Dependencies of the module and its tools (curl, OpenSSL and protobuf-c
# carry the Conduit client; jansson the JSON output).
DEP_PKGS     := libcurl openssl jansson libprotobuf-c
DEP_CFLAGS   := $(shell $(PKG_CONFIG) --cflags $(DEP_PKGS) 2>/dev/null)
JANSSON_LIBS := $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null)
CMOCKA_CFLAGS := $(shell $(PKG_CONFIG) --cflags cmocka 2>/dev/null)
CMOCKA_LIBS  := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)

WARN   := -Wall -Wextra -Wshadow -Wpointer-arith -Wcast-qual -Wformat=2 \
          -Wstrict-prototypes -Wmissing-prototypes -Wundef -Wvla \
          -Wwrite-strings -Wdeclaration-after-statement -Wno-unused-parameter
# -Werror in CI (CI=true) or on request (WERROR=1).
ifneq ($(or $(CI),$(WERROR)),)
WARN   += -Werror
endif
# _FORTIFY_SOURCE as Debian's and Fedora's package builds set it, so a
# plain build warns where theirs would.
OPT    ?= -O2 -g -D_FORTIFY_SOURCE=2
CFLAGS_BASE := -std=c99 -D_GNU_SOURCE -DCBB_VERSION='"$(VERSION)"' $(OPT) $(WARN) \
               -fvisibility=hidden -fstack-protector-strong
CLIENT_LIBS := $(shell $(PKG_CONFIG) --libs libcurl libprotobuf-c jansson libcrypto 2>/dev/null)
# The module links neither libcurl nor OpenSSL: it dlopens them when a
# hook first needs the network (src/core/curl_dl.c), so hooks that need
# no server do not map them.  The packages still depend on libcurl.
MOD_LIBS    := $(shell $(PKG_CONFIG) --libs libprotobuf-c jansson 2>/dev/null) -ldl

# The parts (docs/architecture.md): core is shared, bb and switch are the
# two halves, cli is `conduit-bb`; module.c joins the halves.  bb is in
# layers, a folder each: lang (the directive language), names (how a
# job's transfers and StateDir files are named), wire (Conduit's API),
# state (StateDir), sched (what Slurm says and is told), engine (the
# stage engine), hooks (the Lua glue).
CORE   := core/err core/buf core/arena core/utf8 core/readfile core/path core/config \
          core/config_values core/log core/bytes \
          core/curl_dl core/crypto_dl core/tls core/grpc core/grpc_run core/grpc_request core/grpc_status core/grpc_frame core/cluster core/run
BB_LANG  := bb/lang/words bb/lang/script bb/lang/symbols bb/lang/directive bb/lang/directive_check \
            bb/lang/directive_json
BB_NAMES := bb/names/key
BB_WIRE  := bb/wire/conduit bb/wire/conduit_reply
BB_STATE := bb/state/job bb/state/dir bb/state/shared bb/state/forget bb/state/poll bb/state/outplan
BB_SCHED := bb/sched/jobstate bb/sched/outcome bb/sched/audit
BB_ENGINE := bb/engine/job bb/engine/pick bb/engine/facts bb/engine/decision bb/engine/decide bb/engine/requeue \
          bb/engine/act bb/engine/stage bb/engine/when bb/engine/teardown bb/engine/validate \
          bb/engine/sweep bb/engine/array bb/engine/bbstat bb/engine/account bb/engine/share bb/engine/lost
BB     := $(BB_LANG) $(BB_NAMES) $(BB_WIRE) $(BB_STATE) $(BB_SCHED) $(BB_ENGINE)
SWITCH := switch/netreq switch/controller switch/jobinfo switch/sessionfile
MOD    := core/luahost bb/hooks/call bb/hooks/submit bb/hooks/staging bb/hooks/report \
          switch/jobinfo_lua switch/hooks_switch switch/hooks_step module
# conduit-bb checks scripts offline: no Lua, no network.
CLI_SRC := core/err core/buf core/arena core/utf8 core/readfile core/path core/config \
           core/config_values core/log \
           bb/lang/words bb/lang/script bb/lang/symbols bb/lang/directive bb/lang/directive_check \
           switch/netreq cli/check
# ... and its admin commands (doctor, status, metrics) talk to Conduit and
# read StateDir through the module's own code.
CLI_ADMIN := bb/lang/directive_json core/bytes core/curl_dl core/crypto_dl core/tls core/grpc core/grpc_run \
             core/grpc_request core/grpc_status core/grpc_frame core/cluster core/run \
             $(BB_WIRE) $(BB_NAMES) $(BB_STATE) bb/sched/audit bb/sched/jobstate \
             switch/jobinfo switch/controller \
             cli/admin cli/elf cli/doctor cli/doctor_conf cli/doctor_module \
             cli/doctor_tls cli/doctor_state cli/statedir cli/status cli/status_print cli/metrics cli/metrics_read cli/metrics_render \
             cli/apart cli/doctor_report cli/doctor_as cli/atomic_file \
             $(BB) cli/recover cli/slurmlost cli/slurmjob
HDRS   := $(wildcard src/*/*.h src/bb/*/*.h)
# Each part sees only the headers it may use, so the compiler enforces
# the one-way rule (core <- bb, core <- switch; never bb <-> switch; and
# inside bb each layer only those below it); tests/layout-check.sh
# states it again over the #include lines.
I_LANG   := -Isrc/bb/lang
I_NAMES  := -Isrc/bb/names
I_WIRE   := -Isrc/bb/wire -I$(GEN)
I_STATE  := -Isrc/bb/state
I_SCHED  := -Isrc/bb/sched
I_ENGINE := -Isrc/bb/engine
I_HOOKS  := -Isrc/bb/hooks
I_BB     := $(I_LANG) $(I_NAMES) $(I_WIRE) $(I_STATE) $(I_SCHED) $(I_ENGINE) $(I_HOOKS)
INC_ALL := -Isrc/core $(I_BB) -Isrc/switch
INC     = $(INC_ALL)

# What needs no Lua (core, bb, switch but their Lua glue, the generated
# code) is compiled once, position-independent, into $(PIC), and linked
# into every Lua's module and into conduit-bb; only MOD sees a Lua's
# headers, once per Lua, in $(LB).
PIC    := $(B)/pic
LB     := $(B)/lua$(LUA_VERSION)
SO     := $(LB)/conduit_bb.so
CLI    := $(B)/conduit-bb
CLI_OWN    := $(sort $(filter cli/%,$(CLI_SRC) $(CLI_ADMIN)))
CLI_SHARED := $(sort $(filter-out cli/%,$(CLI_SRC) $(CLI_ADMIN)))
$(PIC)/core/%.o $(LB)/core/%.o: INC = -Isrc/core
$(PIC)/bb/lang/%.o: INC = -Isrc/core $(I_LANG)
$(PIC)/bb/names/%.o: INC = -Isrc/core $(I_NAMES)
$(PIC)/bb/wire/%.o: INC = -Isrc/core $(I_NAMES) $(I_WIRE)
$(PIC)/bb/state/%.o: INC = -Isrc/core $(I_NAMES) $(I_STATE)
$(PIC)/bb/sched/%.o: INC = -Isrc/core $(I_LANG) $(I_SCHED)
$(PIC)/bb/engine/%.o: INC = -Isrc/core $(I_LANG) $(I_NAMES) $(I_WIRE) $(I_STATE) $(I_SCHED) $(I_ENGINE)
$(LB)/bb/hooks/%.o: INC = -Isrc/core $(I_BB)
$(PIC)/switch/%.o $(LB)/switch/%.o: INC = -Isrc/core -Isrc/switch

.PHONY: all check check-fast e2e demo install uninstall fuzz clean deps lua-all bench rpm deb dist
all: $(SO) $(CLI)

# ---- generated protobuf-c code -------------------------------------
# (one run makes both: `make -j` must not run it twice at once)
$(GEN)/conduit.pb-c.c $(GEN)/conduit.pb-c.h &: src/bb/wire/proto/conduit.proto
	@mkdir -p $(GEN)
	@echo "  PROTOC  $<"
	@protoc-c -Isrc/bb/wire/proto --c_out=$(GEN) $<

# ---- the module ------------------------------------------------------
$(PIC)/%.o: src/%.c $(HDRS) $(GEN)/conduit.pb-c.h
	@mkdir -p $(@D)
	@echo "  CC      $@"
	@$(CC) $(CFLAGS_BASE) $(INC) -fPIC $(DEP_CFLAGS) $(CFLAGS) -c $< -o $@

$(LB)/%.o: src/%.c $(HDRS) $(GEN)/conduit.pb-c.h
	@mkdir -p $(@D)
	@echo "  CC      $@"
	@$(CC) $(CFLAGS_BASE) $(INC) -fPIC $(LUA_CFLAGS) $(DEP_CFLAGS) $(CFLAGS) -c $< -o $@

# generated code: same hiding, without our warning set
$(PIC)/conduit.pb-c.o: $(GEN)/conduit.pb-c.c
	@mkdir -p $(@D)
	@echo "  CC      $@"
	@$(CC) -std=c99 $(OPT) -fPIC -fvisibility=hidden -I$(GEN) $(DEP_CFLAGS) -c $< -o $@

$(SO): $(addprefix $(PIC)/,$(addsuffix .o,$(CORE) $(BB) $(SWITCH)) conduit.pb-c.o) \
       $(addprefix $(LB)/,$(addsuffix .o,$(MOD))) src/conduit_bb.map
	$(CC) -shared -o $@ $(filter %.o,$^) -Wl,--version-script=src/conduit_bb.map \
	  -Wl,-z,nodelete -Wl,-z,relro,-z,now -Wl,--as-needed $(MOD_LIBS) -lpthread $(LDFLAGS)

# ---- the command-line tool (no Lua) ----------------------------------
$(B)/cli/%.o: src/%.c $(HDRS) $(GEN)/conduit.pb-c.h
	@mkdir -p $(@D)
	@echo "  CC      $@"
	@$(CC) $(CFLAGS_BASE) $(INC) $(DEP_CFLAGS) $(CFLAGS) -c $< -o $@

$(CLI): $(addprefix $(B)/cli/,$(addsuffix .o,$(CLI_OWN))) \
        $(addprefix $(PIC)/,$(addsuffix .o,$(CLI_SHARED)) conduit.pb-c.o)
	$(CC) -o $@ $^ $(CLIENT_LIBS) -lpthread $(LDFLAGS)

$(B) $(LB):
	mkdir -p $@

# (conduit-bb too, after them: it links the same $(PIC) objects, and a
# make of its own running beside these would compile them a second time,
# newer than the modules linked from them, which the next make relinks)
lua-all: $(GEN)/conduit.pb-c.h
	for v in 5.1 5.2 5.3 5.4; do $(MAKE) --no-print-directory LUA_VERSION=$$v $(B)/lua$$v/conduit_bb.so || exit 1; done
	$(MAKE) --no-print-directory $(CLI)

# ---- the switch/lua plugin for Slurm (slurm/switch_lua/) --------------
include slurm/switch_lua/switch_lua.mk

# ---- tests -----------------------------------------------------------
include tests/tests.mk

deps:
	sh tests/deps.sh

# tests/run-checks.sh builds the tests itself (make test-build), beside
# the end-to-end suites, which build the module in their own roots.
check: deps
	sh tests/run-checks.sh

check-fast: deps
	CBB_CHECKS=fast sh tests/run-checks.sh

SLURM ?= 24.11
e2e: deps
	CBB_CHECKS=e2e CBB_E2E_MATRIX="$(SLURM)" sh tests/run-checks.sh

demo: deps
	sh tests/demo.sh

# ---- install ---------------------------------------------------------
# The shims go where Slurm looks for them (beside slurm.conf); a site file
# that differs is never overwritten: ours is then left beside it as
# <name>.conduit-bb for the admin to merge.
install: $(SO) $(CLI)
	install -d $(DESTDIR)$(LUA_CMOD_DIR) $(DESTDIR)$(BINDIR) \
	  $(DESTDIR)$(SLURM_CONFDIR) $(DESTDIR)$(DOCDIR) \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5
	install -m 0755 $(SO) $(DESTDIR)$(LUA_CMOD_DIR)/conduit_bb.so
	install -m 0755 $(CLI) $(DESTDIR)$(BINDIR)/conduit-bb
	install -m 0644 man/conduit-bb.1 $(DESTDIR)$(MANDIR)/man1/conduit-bb.1
	install -m 0644 man/conduit_bb.conf.5 $(DESTDIR)$(MANDIR)/man5/conduit_bb.conf.5
	for f in burst_buffer.lua switch.lua; do \
	  dst=$(DESTDIR)$(SLURM_CONFDIR)/$$f; \
	  if [ -e "$$dst" ] && ! cmp -s lua/$$f "$$dst"; then \
	    install -m 0644 lua/$$f "$$dst.conduit-bb"; \
	    echo "note: kept the existing $$dst; ours is $$dst.conduit-bb"; \
	  else \
	    install -m 0644 lua/$$f "$$dst"; \
	  fi; \
	done
	install -m 0644 conf/conduit_bb.conf.example $(DESTDIR)$(SLURM_CONFDIR)/conduit_bb.conf.example
	install -m 0644 README.md LICENSE docs/*.md $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -f $(DESTDIR)$(LUA_CMOD_DIR)/conduit_bb.so $(DESTDIR)$(BINDIR)/conduit-bb \
	  $(DESTDIR)$(SLURM_CONFDIR)/conduit_bb.conf.example \
	  $(DESTDIR)$(MANDIR)/man1/conduit-bb.1 $(DESTDIR)$(MANDIR)/man5/conduit_bb.conf.5
	for f in burst_buffer.lua switch.lua; do \
	  dst=$(DESTDIR)$(SLURM_CONFDIR)/$$f; \
	  rm -f "$$dst.conduit-bb"; \
	  if cmp -s lua/$$f "$$dst"; then rm -f "$$dst"; fi; \
	done
	rm -rf $(DESTDIR)$(DOCDIR)

# ---- packaging -------------------------------------------------------
RPM_LUA_VERSION ?= $(LUA_VERSION)
dist:
	@mkdir -p $(B)
	tar czf $(B)/conduit-bb-$(VERSION).tar.gz --transform 's,^\.,conduit-bb-$(VERSION),' \
	  --exclude=./build --exclude=./.git .

# Built with rpmbuild; --nodeps because this host's rpm database does not
# know the build packages (Debian installs them with apt).  With
# SLURM_SRC (a configured Slurm tree) also the conduit-bb-switch-lua
# subpackage: the switch/lua plugin for that exact Slurm version.
RPM_SLURM = $(if $(SLURM_SRC),--define "slurm_src $(abspath $(SLURM_SRC))" \
  --define "slurm_build $(abspath $(SLURM_BUILD))" \
  --define "slurm_version $(SLURM_VERSION)")
rpm: dist $(if $(SLURM_SRC),switch-plugin-tree)
	rm -rf $(B)/rpm
	rpmbuild -ta --nodeps --define "_topdir $(abspath $(B))/rpm" \
	  --define "lua_version $(RPM_LUA_VERSION)" $(RPM_SLURM) $(B)/conduit-bb-$(VERSION).tar.gz
	@ls $(B)/rpm/RPMS/*/conduit-bb-*.rpm

# The Debian package (dpkg-deb): for Lua 5.1, where Debian's Slurm looks
# (deb/build.sh); build/deb/conduit-bb_*.deb.
deb:
	sh deb/build.sh $(abspath $(B))/deb

clean:
	rm -rf $(B)
