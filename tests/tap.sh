# TAP helpers sourced by the command tests: `check "description" 'shell test'` prints ok/not ok N,
# `skip "description" "reason"`; the caller ends with `echo "1..$n"`.
n=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
notok () { n=$((n + 1)); echo "not ok $n - $1"; }
skip () { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check () { if eval "$2"; then ok "$1"; else notok "$1"; fi; }
