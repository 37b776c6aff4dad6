#!/bin/sh
# The manual pages (man/local.mk) against the programs' --help, as TAP: every command of
# `trainsim --help` has its page and trainsim(1) lists it; every page has the sections a reader looks
# for; every option of `trainsim CMD --help` (and of trainsim-trainer --help, where built) is in its
# page, by name in the roff and with its help text in the rendered page; and each page renders
# without a warning. Rendering uses groff (-ww) or else `man -l`; with neither, those checks skip.
src=${TRAINSIM_SRCDIR:-$(dirname "$0")/..}
. "$src/tests/tap.sh"
t=${TRAINSIM:-./trainsim}
build=$(dirname "$t")
man=$build/man
trainer=$build/calib/trainer/trainsim-trainer
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The locale the pages were written in (man/man-from-help), so --help prints the same text.
if (LC_ALL=C.UTF-8 locale charmap) 2>/dev/null | grep -q UTF-8; then LC_ALL=C.UTF-8; else LC_ALL=C; fi
export LC_ALL

renderer=
if command -v groff >/dev/null 2>&1; then renderer=groff
elif command -v man >/dev/null 2>&1; then renderer=man; fi
# Plain text, one line per paragraph (no wrapping), no bold or underline overstrikes; the minus
# and hyphen signs of other roff setups read as '-'.
render () {
  case $renderer in
    groff) groff -man -Tutf8 -rLL=1000n -P-c -P-b -P-u "$1" ;;
    man) MANWIDTH=1000 man -l "$1" ;;
  esac | sed -e 's/^ *//' -e 's/  */ /g' -e 's/−/-/g' -e 's/‐/-/g'
}
warnings () {
  case $renderer in
    groff) groff -man -Tutf8 -ww -z "$1" 2>&1 >/dev/null ;;
    man) MANWIDTH=80 man --warnings=w -l "$1" 2>&1 >/dev/null ;;
  esac
}

# The option lines of a --help ("  -x, --long=ARG  help", continuation lines indented 8 or more)
# as "SPEC<tab>HELP", the way man/man-from-help reads them.
options () {
  awk '/^  -[-A-Za-z0-9]/ { if (s != "") print s "\t" h; x = $0; sub(/^ +/, "", x); k = index(x, "  ")
                            if (k) { s = substr(x, 1, k - 1); h = substr(x, k); sub(/^ +/, "", h) } else { s = x; h = "" }
                            next }
       s != "" && /^        / { x = $0; sub(/^ +/, "", x); h = (h == "" ? x : h " " x); next }
       s != "" { print s "\t" h; s = "" }
       END { if (s != "") print s "\t" h }' "$1" | sed -e 's/  */ /g' -e 's/ *$//'
}

check_page () { # PAGE HELPFILE
  page=$1; help=$2; f=$man/$page.1
  if [ ! -f "$f" ]; then
    notok "$page: $f exists"; return
  fi
  ok "$page: $f exists"
  missing=
  for s in NAME SYNOPSIS DESCRIPTION OPTIONS 'EXIT STATUS' 'SEE ALSO'; do
    grep -qx "\.SH $s" "$f" || missing="$missing [$s]"
  done
  check "$page: NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXIT STATUS, SEE ALSO${missing:+ (missing:$missing)}" '[ -z "$missing" ]'
  options "$help" > "$tmp/opts"
  # Every option name, bold in the roff ("\fB\-\-set\fR").
  missing=
  for o in $(cut -f1 "$tmp/opts" | tr ' ,' '\n\n' | sed -n 's/=.*//; /^-/p'); do
    grep -qF "\\fB$(printf '%s' "$o" | sed 's/-/\\-/g')\\fR" "$f" || missing="$missing $o"
  done
  n_opts=$(wc -l < "$tmp/opts")
  check "$page: the $n_opts options of --help are named in the page${missing:+ (missing:$missing)}" \
    '[ "$n_opts" -gt 0 ] && [ -z "$missing" ]'
  if [ -z "$renderer" ]; then
    skip "$page: each option's line and help text in the rendered page" "neither groff nor man"
    skip "$page: renders without warnings" "neither groff nor man"
    return
  fi
  render "$f" > "$tmp/page"
  missing=
  while IFS='	' read -r spec text; do
    # A tag narrower than the indent has its text on the same line.
    { grep -qxF -- "$spec" "$tmp/page" && { [ -z "$text" ] || grep -qxF -- "$text" "$tmp/page"; }; } \
      || grep -qxF -- "$spec $text" "$tmp/page" || missing="$missing '$spec'"
  done < "$tmp/opts"
  check "$page: each option's line and help text in the rendered page${missing:+ (differ:$missing)}" '[ -z "$missing" ]'
  warnings "$f" > "$tmp/warn"
  check "$page: renders without warnings ($renderer)$(sed 's/^/ /' "$tmp/warn" | tr '\n' ' ')" '[ ! -s "$tmp/warn" ]'
}

"$t" --help > "$tmp/top"; rc=$?
check "trainsim --help exits 0" '[ "$rc" = 0 ]'
cmds=$(sed -n '/^Commands:$/,/^$/s/^  \([a-z][-a-z0-9]*\)  .*/\1/p' "$tmp/top")
check "trainsim --help lists commands" '[ -n "$cmds" ]'
check_page trainsim "$tmp/top"
missing=
for c in $cmds; do
  grep -qxF "\\fB$(printf '%s' "$c" | sed 's/-/\\-/g')\\fR" "$man/trainsim.1" 2>/dev/null || missing="$missing $c"
done
check "trainsim(1) lists every command${missing:+ (missing:$missing)}" '[ -z "$missing" ]'
for c in $cmds; do
  "$t" "$c" --help > "$tmp/help.$c"; rc=$?
  check "trainsim $c --help exits 0" '[ "$rc" = 0 ]'
  check_page "trainsim-$c" "$tmp/help.$c"
done
if [ -x "$trainer" ]; then
  "$trainer" --help > "$tmp/help.trainer"; rc=$?
  check "trainsim-trainer --help exits 0" '[ "$rc" = 0 ]'
  check_page trainsim-trainer "$tmp/help.trainer"
else
  skip "trainsim-trainer(1)" "trainsim-trainer not built (configure found no CUDA and NCCL)"
fi
echo "1..$n"
