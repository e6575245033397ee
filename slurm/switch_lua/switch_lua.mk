# switch_lua.mk - the switch/lua plugin for Slurm (slurm/switch_lua/),
# included by the top-level Makefile.
#
#   make switch-plugin SLURM_SRC=<configured Slurm tree>
#        build/switch_lua/switch_lua.so and build/switch_lua/switch-lua-run
#   make install-switch-plugin SLURM_SRC=... [DESTDIR=...]
#        the plugin into Slurm's plugin directory, the helper to
#        SWITCH_LUA_HELPER (compiled into the plugin)
#
# Slurm loads a plugin only when its plugin_version is the running
# Slurm's exact version, and the plugin reads job and step records
# directly: build it against the configured source tree of the very
# Slurm it runs in (docs/admin.md, "The switch/lua plugin").  A tree
# configured elsewhere than its source: SLURM_BUILD=<build dir>.
# The helper links the Lua of SWITCH_LUA_VERSION (default LUA_VERSION);
# conduit_bb.so must be built for the same Lua.

SLURM_SRC   ?=
SLURM_BUILD ?= $(SLURM_SRC)
SWL_SRC     := slurm/switch_lua
SWL_B       := $(B)/switch_lua
SWITCH_LUA_VERSION ?= $(LUA_VERSION)

# Where the configured tree installs (its Makefile's prefix and libdir).
slurm_make_var = $(shell sed -n 's/^$(1) = //p' $(SLURM_BUILD)/Makefile 2>/dev/null)
SLURM_PREFIX     ?= $(call slurm_make_var,prefix)
SLURM_LIBDIR     ?= $(subst $${exec_prefix},$(SLURM_PREFIX),$(subst $${prefix},$(SLURM_PREFIX),$(call slurm_make_var,libdir)))
SLURM_PLUGIN_DIR ?= $(SLURM_LIBDIR)/slurm
SWITCH_LUA_HELPER ?= $(SLURM_PREFIX)/libexec/slurm/switch-lua-run
# "26.05.3", from slurm_version.h's SLURM_VERSION_NUMBER 0x1a0503
SLURM_VERSION = $(shell v=$$(sed -n 's/^\#define SLURM_VERSION_NUMBER //p' \
  $(SLURM_BUILD)/slurm/slurm_version.h 2>/dev/null); [ -n "$$v" ] && \
  printf '%d.%02d.%d' $$((v >> 16)) $$(((v >> 8) & 255)) $$((v & 255)))

SWL_OBJS := switch_lua restart ctld teardown task pool stepd call run wire
SWL_HDRS := $(wildcard $(SWL_SRC)/*.h)
# Slurm's headers are written in GNU C and are not ours to warn about.
SWL_CFLAGS := -std=gnu99 -D_GNU_SOURCE -DHAVE_CONFIG_H $(OPT) $(WARN) -fPIC \
              -fstack-protector-strong -isystem $(SLURM_BUILD) -isystem $(SLURM_SRC) \
              -DSWL_HELPER_PATH='"$(SWITCH_LUA_HELPER)"' -DSWL_IN_SLURM
SWL_LUA_CFLAGS := $(shell $(PKG_CONFIG) --cflags lua$(SWITCH_LUA_VERSION) 2>/dev/null)
SWL_LUA_LIBS   := $(shell $(PKG_CONFIG) --libs lua$(SWITCH_LUA_VERSION) 2>/dev/null)

.PHONY: switch-plugin install-switch-plugin switch-plugin-tree
switch-plugin-tree:
	@[ -n "$(SLURM_SRC)" ] || { echo "make switch-plugin: set SLURM_SRC to a configured Slurm source tree (./configure run in it), e.g. SLURM_SRC=/usr/src/slurm-26.05.3"; exit 2; }
	@[ -f "$(SLURM_BUILD)/config.h" ] && [ -f "$(SLURM_BUILD)/slurm/slurm_version.h" ] || { echo "make switch-plugin: $(SLURM_BUILD) has no config.h and slurm/slurm_version.h: run ./configure there (with the flags of the Slurm you run)"; exit 2; }
	@[ -f "$(SLURM_SRC)/src/interfaces/switch.h" ] || { echo "make switch-plugin: $(SLURM_SRC) is not a Slurm source tree"; exit 2; }
	@grep -q 'switch_p_stepmgr_init' "$(SLURM_SRC)/src/interfaces/switch.c" || { echo "make switch-plugin: $(SLURM_SRC) is not Slurm 26.05 (its switch interface differs)"; exit 2; }
	@echo "  SLURM   $(SLURM_VERSION) in $(SLURM_SRC); plugin dir $(SLURM_PLUGIN_DIR); helper $(SWITCH_LUA_HELPER); Lua $(SWITCH_LUA_VERSION)"

switch-plugin: switch-plugin-tree
	@$(MAKE) --no-print-directory $(SWL_B)/switch_lua.so $(SWL_B)/switch-lua-run

# rebuilt whenever switch-plugin runs: the tree or the paths may differ
$(SWL_B)/%.o: $(SWL_SRC)/%.c $(SWL_HDRS) FORCE
	@mkdir -p $(@D)
	@echo "  CC      $@"
	@$(CC) $(SWL_CFLAGS) $(CFLAGS) -c $< -o $@

$(SWL_B)/switch_lua.so: $(addprefix $(SWL_B)/,$(addsuffix .o,$(SWL_OBJS))) $(SWL_SRC)/switch_lua.map
	@echo "  LD      $@"
	@$(CC) -shared -o $@ $(filter %.o,$^) -Wl,--version-script=$(SWL_SRC)/switch_lua.map \
	  -Wl,-z,nodelete -Wl,-z,relro -lpthread $(LDFLAGS)

$(SWL_B)-helper/%.o: $(SWL_SRC)/%.c $(SWL_HDRS)
	@mkdir -p $(@D)
	@echo "  CC      $@"
	@$(CC) -std=c99 -D_GNU_SOURCE $(OPT) $(WARN) -fstack-protector-strong \
	  $(SWL_LUA_CFLAGS) $(CFLAGS) -c $< -o $@

SWL_HELPER_OBJS := helper helper_lua helper_out helper_seal wire
$(SWL_B)/switch-lua-run: $(addprefix $(SWL_B)-helper/,$(addsuffix .o,$(SWL_HELPER_OBJS)))
	@mkdir -p $(@D)
	@echo "  LD      $@"
	@$(CC) -o $@ $^ $(SWL_LUA_LIBS) -lm -Wl,-z,relro,-z,now $(LDFLAGS)

install-switch-plugin: switch-plugin
	install -d $(DESTDIR)$(SLURM_PLUGIN_DIR) $(DESTDIR)$(dir $(SWITCH_LUA_HELPER))
	install -m 0755 $(SWL_B)/switch_lua.so $(DESTDIR)$(SLURM_PLUGIN_DIR)/switch_lua.so
	install -m 0755 $(SWL_B)/switch-lua-run $(DESTDIR)$(SWITCH_LUA_HELPER)

.PHONY: FORCE
FORCE:
