# tests.mk - test binaries, included by the top-level Makefile.
# `make check` installs what is missing (tests/deps.sh), builds everything
# below and runs tests/run-checks.sh.

T        := $(B)/test
ASAN     := $(B)/asan
UNITS    := words path symbols script config buf_err cases client netreq jobinfo grpc cli tls decide
# Everything but the Lua glue, for unit tests linked without Lua.
CORE_SRC := $(addprefix src/,$(addsuffix .c,$(CORE) $(BB) $(SWITCH))) \
            $(GEN)/conduit.pb-c.c
TEST_CFLAGS := -std=gnu99 -D_GNU_SOURCE -DCBB_VERSION='"$(VERSION)"' -g -O1 $(WARN) \
               -Wno-missing-prototypes -Wno-declaration-after-statement -Wno-cast-qual \
               $(INC_ALL) $(CMOCKA_CFLAGS)
TEST_LIBS := $(CMOCKA_LIBS) $(CLIENT_LIBS) -lpthread
SAN      := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
            -fno-omit-frame-pointer
TEST_LUAS := 5.1 5.4

$(T) $(ASAN) $(B)/fuzz:
	mkdir -p $@

# test_grpc.c makes the module's own calloc fail on request (out of memory)
$(T)/unit_grpc $(ASAN)/unit_grpc: TEST_LIBS += -Wl,--wrap=calloc
# test_cli.c compiles in the CLI files it tests (src/cli/ is no library)
$(T)/unit_cli $(ASAN)/unit_cli: $(wildcard src/cli/*.c)
# test_tls.c runs a TLS server of its own
$(T)/unit_tls $(ASAN)/unit_tls: TEST_LIBS += -lssl

# The code under test, compiled once per flavour (plain, ASan+UBSan) into
# an archive every unit test links: each takes only what it calls.
CORE_OBJ := $(patsubst src/%.c,%.o,$(filter src/%,$(CORE_SRC))) conduit.pb-c.o
$(T)/obj/%.o: src/%.c $(HDRS) $(GEN)/conduit.pb-c.h
	@mkdir -p $(@D)
	@echo "  TEST-CC $@"
	@$(CC) $(TEST_CFLAGS) -c $< -o $@
$(ASAN)/obj/%.o: src/%.c $(HDRS) $(GEN)/conduit.pb-c.h
	@mkdir -p $(@D)
	@echo "  ASAN-CC $@"
	@$(CC) $(TEST_CFLAGS) $(SAN) -c $< -o $@
$(T)/obj/conduit.pb-c.o $(ASAN)/obj/conduit.pb-c.o: $(GEN)/conduit.pb-c.c
	@mkdir -p $(@D)
	@$(CC) $(TEST_CFLAGS) $(if $(findstring $(ASAN),$@),$(SAN)) -w -c $< -o $@
$(T)/libcore.a: $(addprefix $(T)/obj/,$(CORE_OBJ))
	@rm -f $@ && ar rcs $@ $^
$(ASAN)/libcore.a: $(addprefix $(ASAN)/obj/,$(CORE_OBJ))
	@rm -f $@ && ar rcs $@ $^

$(T)/unit_%: tests/unit/test_%.c $(T)/libcore.a $(HDRS) tests/unit/cmocka_all.h | $(T)
	@echo "  TEST-CC $@"
	@$(CC) $(TEST_CFLAGS) $< $(T)/libcore.a $(TEST_LIBS) -o $@

$(ASAN)/unit_%: tests/unit/test_%.c $(ASAN)/libcore.a $(HDRS) tests/unit/cmocka_all.h | $(ASAN)
	@echo "  ASAN-CC $@"
	@$(CC) $(TEST_CFLAGS) $(SAN) $< $(ASAN)/libcore.a $(TEST_LIBS) -o $@

# (defined before the first rule that lists it: prerequisites expand at once)
FUZZ_SRC := $(addprefix src/,$(addsuffix .c,$(filter-out cli/check,$(CLI_SRC))))
$(ASAN)/fuzz_replay: tests/fuzz/fuzz_parse.c tests/fuzz/replay.c $(ASAN)/libcore.a $(HDRS) | $(ASAN)
	@echo "  ASAN-CC $@"
	@$(CC) $(TEST_CFLAGS) $(SAN) tests/fuzz/fuzz_parse.c tests/fuzz/replay.c $(ASAN)/libcore.a -o $@

$(T)/hook_loop-%: tests/stress/hook_loop.c tests/bench/hook_host.h | $(T)
	@echo "  TEST-CC $@"
	@$(CC) -std=gnu99 -O2 -g -Wall -Wextra $< \
	  $$($(PKG_CONFIG) --cflags --libs lua$*) -lpthread -o $@

# The switch/lua host emulator and its lifecycle scenarios.
$(T)/test_switch: tests/switch/test_switch.c tests/switch/host.c tests/switch/host.h | $(T)
	@echo "  TEST-CC $@"
	@$(CC) -std=gnu99 -D_GNU_SOURCE -g -O1 -Wall -Wextra $(CMOCKA_CFLAGS) \
	  tests/switch/test_switch.c tests/switch/host.c \
	  $$($(PKG_CONFIG) --cflags --libs lua5.4) $(CMOCKA_LIBS) -o $@

# The switch/lua plugin's helper through the plugin's runner, without
# Slurm: run.c is built against tests/switch/shim's stand-ins for Slurm's
# run_command, xmalloc and log headers.
$(T)/test_runner: tests/switch/test_runner.c tests/switch/run_command_shim.c \
                  slurm/switch_lua/run.c slurm/switch_lua/wire.c \
                  $(wildcard slurm/switch_lua/*.h tests/switch/shim/src/common/*.h) \
                  $(B)/switch_lua/switch-lua-run | $(T)
	@echo "  TEST-CC $@"
	@$(CC) -std=gnu99 -D_GNU_SOURCE -g -O1 -Wall -Wextra $(CMOCKA_CFLAGS) \
	  -Itests/switch/shim tests/switch/test_runner.c tests/switch/run_command_shim.c \
	  slurm/switch_lua/run.c slurm/switch_lua/wire.c \
	  $(CMOCKA_LIBS) -lpthread -o $@

# libFuzzer needs clang; `make fuzz` runs it, `make check` replays the corpus.
$(B)/fuzz/fuzz_parse: tests/fuzz/fuzz_parse.c $(FUZZ_SRC) $(HDRS) | $(B)/fuzz
	clang -std=gnu99 -D_GNU_SOURCE -g -O1 $(SAN) -fsanitize=fuzzer $(INC_ALL) \
	  tests/fuzz/fuzz_parse.c $(FUZZ_SRC) -o $@

FUZZ_SECONDS ?= 600
fuzz: $(B)/fuzz/fuzz_parse
	rm -rf $(B)/fuzz/work && mkdir -p $(B)/fuzz/work
	cp tests/fuzz/corpus/* $(B)/fuzz/work/
	$(B)/fuzz/fuzz_parse -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
	  -timeout=5 -print_final_stats=1 -artifact_prefix=$(B)/fuzz/ $(B)/fuzz/work

# Python messages for the Conduit test server, from the same proto.
$(GEN)/py/conduit_pb2.py: src/bb/wire/proto/conduit.proto
	@mkdir -p $(GEN)/py
	@echo "  PROTOC  $< (python)"
	@protoc -Isrc/bb/wire/proto --python_out=$(GEN)/py --grpc_out=$(GEN)/py \
	  --plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin $<

# The module itself under ASan+UBSan, loaded by busted with libasan preloaded.
$(ASAN)/mod/lua5.4/conduit_bb.so: $(wildcard src/*.c src/*/*.c src/bb/*/*.c $(HDRS)) $(GEN)/conduit.pb-c.c
	@$(MAKE) --no-print-directory B=$(ASAN)/mod LUA_VERSION=5.4 GEN=$(GEN) \
	  OPT="-O1 -g $(SAN)" LDFLAGS="$(SAN)" $@

# The Lua 5.4 interpreter of that run, linked with the same runtimes.
$(ASAN)/bin/lua5.4: tests/lua/lua_asan.c
	@mkdir -p $(@D)
	@echo "  ASAN-CC $@"
	@$(CC) -std=gnu99 -O1 -g -Wall -Wextra $(SAN) $< \
	  $$($(PKG_CONFIG) --cflags --libs lua5.4) -o $@

test-build: $(GEN)/py/conduit_pb2.py lua-all $(ASAN)/mod/lua5.4/conduit_bb.so $(ASAN)/bin/lua5.4 $(addprefix $(T)/unit_,$(UNITS)) \
            $(addprefix $(ASAN)/unit_,$(UNITS)) $(ASAN)/fuzz_replay \
            $(addprefix $(T)/hook_loop-,$(TEST_LUAS)) $(T)/test_switch \
            $(B)/switch_lua/switch-lua-run $(T)/test_runner

test-all:
	sh tests/run-checks.sh

$(T)/bench-%: tests/bench/bench.c tests/bench/hook_host.h | $(T)
	@echo "  TEST-CC $@"
	@$(CC) -std=gnu99 -O2 -g -Wall -Wextra $< $$($(PKG_CONFIG) --cflags --libs lua$*) -o $@

# one new process per hook call, as Slurm runs them (docs/performance.md)
$(T)/fork_bench-%: tests/bench/fork_bench.c tests/bench/hook_host.h | $(T)
	@echo "  TEST-CC $@"
	@$(CC) -std=gnu99 -D_GNU_SOURCE -O2 -g -Wall -Wextra $< $$($(PKG_CONFIG) --cflags --libs lua$*) -o $@

$(T)/vs_reference-%: tests/bench/vs_reference.c tests/bench/hook_host.h | $(T)
	@echo "  TEST-CC $@"
	@$(CC) -std=gnu99 -O2 -g -Wall -Wextra $< $$($(PKG_CONFIG) --cflags --libs lua$*) -o $@

# Measurements, not tests: see docs/performance.md.  Conduit's own plugin
# is read from where it lies (never copied): CBB_REFERENCE names it.
CBB_REFERENCE ?= $(abspath $(CURDIR)/../shared/reference/conduit-reference/burst_buffer.lua)
bench: deps $(GEN)/py/conduit_pb2.py $(SO) $(T)/fork_bench-5.4 $(T)/bench-5.4 $(T)/hook_loop-5.4 $(T)/vs_reference-5.4
	CBB_REFERENCE="$(CBB_REFERENCE)" sh tests/bench/run.sh

.PHONY: test-build test-all fuzz bench
