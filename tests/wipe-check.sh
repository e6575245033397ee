#!/bin/sh
# wipe-check.sh [OBJDIR...] - the object code of every place a key, token or
# session secret is wiped still wipes.  A memset() of a buffer that is
# not read again is a dead store, and an optimising compiler removes it
# (issue 26: no memset on either token path of an -O2 build).  The wipes
# go through explicit_bzero or OPENSSL_cleanse, which it may not remove;
# this check reads the relocations of the optimised objects (default
# build/pic build/lua5.4: the module as installed, its Lua-free objects
# and its Lua glue) and fails when a function below
# lost its call.  A static function may be inlined into its caller:
# "a|b" accepts the call in either, clones (.isra, .constprop) included.
set -u
cd "$(dirname "$0")/.." || exit 2
DIRS=${*:-build/pic build/lua5.4}
WIPE='explicit_bzero|__explicit_bzero_chk|OPENSSL_cleanse'
bad=0

# calls OBJ FUNCS SYMS: how many calls (relocations) to SYMS the
# functions FUNCS of OBJ make
calls() {
	objdump -dr --no-show-raw-insn "$1" | awk -v funcs="$2" -v syms="$3" '
		BEGIN { nf = split(funcs, f, "|"); ns = split(syms, s, "|") }
		/^[0-9a-f]+ <[^>]+>:$/ {
			name = $2
			gsub(/[<>:]/, "", name)
			sub(/\..*/, "", name)
			cur = 0
			for (i = 1; i <= nf; i++)
				if (name == f[i])
					cur = 1
			next
		}
		cur && /R_[A-Z0-9_]+/ {
			t = $NF
			sub(/[-+]0x[0-9a-f]+$/, "", t)
			for (i = 1; i <= ns; i++)
				if (t == s[i])
					n++
		}
		END { print n + 0 }'
}

# want OBJ FUNCS SYMS MIN WHAT
want() {
	obj=""
	for d in $DIRS; do [ -f "$d/$1" ] && obj=$d/$1; done
	if [ -z "$obj" ]; then
		echo "missing $1 under $DIRS (build the module first)"
		bad=1
		return
	fi
	got=$(calls "$obj" "$2" "$3")
	if [ "$got" -lt "$4" ]; then
		echo "FAIL $1: $2 makes $got call(s) to $3, want >= $4 ($5)"
		bad=1
	else
		echo "ok   $1: $2: $got wipe call(s) ($5)"
	fi
}

# the wipers themselves
want core/buf.o cbb_wipe "$WIPE" 1 "cbb_wipe wipes"
want core/buf.o cbb_buf_reserve "$WIPE|cbb_wipe" 1 "a secret buffer's old copy, when it grows"
want core/buf.o cbb_buf_free "$WIPE|cbb_wipe" 1 "a secret buffer, when freed"
want core/buf.o cbb_buf_reset "$WIPE|cbb_wipe" 1 "a secret buffer, when reset"
want switch/jobinfo.o cbb_key_wipe "$WIPE" 1 "the MAC key"
want switch/jobinfo.o derive "$WIPE" 1 "SessionKeyFile's bytes"
want switch/jobinfo.o cbb_seal "$WIPE|derive" 2 "the sealing key"
want switch/jobinfo.o cbb_unseal "$WIPE|derive" 3 "the sealing key, a token that did not open"
# the controller's answer: the token in our copy and in jansson's
want switch/controller.o wiping_free "$WIPE|cbb_wipe" 1 "jansson's memory (json_set_alloc_funcs)"
want switch/controller.o "parse_session|cbb_ctl_reserve" "$WIPE|cbb_wipe|cbb_session_wipe" 1 \
	"a refused answer's session"
want switch/controller.o "cbb_session_wipe" "$WIPE|cbb_wipe" 1 "a session (token)"
# the TLS session saved for the next hook process (its resumption
# secret), and the client key while the binding is hashed
want core/tls.o "load_session|on_info" "$WIPE|cbb_wipe" 1 "a saved TLS session, read"
want core/tls.o "save_session|on_new_session" "$WIPE|cbb_wipe" 1 "a TLS session, written"
want core/tls.o "add_file|cbb_tls_resume_init" "$WIPE|cbb_wipe|cbb_buf_free" 2 \
	"ClientKey's bytes, hashed into the binding"
# the hooks: the plaintext token, the MAC key
want switch/hooks_switch.o "reserve|l_job_start" "cbb_session_wipe|cbb_wipe|$WIPE" 1 \
	"job_start: the controller's plaintext token"
want switch/hooks_switch.o "l_job_start" "cbb_key_wipe|$WIPE" 1 "job_start: the MAC key"
want switch/hooks_step.o "l_step_init" "cbb_wipe|$WIPE" 2 \
	"step_init: the unsealed token, file and environment paths"
want switch/hooks_step.o "step_info" "cbb_key_wipe|$WIPE" 1 "step hooks: the MAC key"
exit $bad
