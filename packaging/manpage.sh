#!/usr/bin/env bash
# Writes coldgate's man page, gzip'd (Debian policy 12.1: `gzip -9n`), from the binary's own
# help: help2man formats `coldgate --help` (synopsis, options, the command list, exit codes) and
# its --include file gets a COMMANDS section made here from each listed command's `--help`
# (usage, arguments, options), so a command added to the binary's table is in the next page
# without an edit here. The EXAMPLES, FILES and SEE ALSO sections come from manpage.h2m.
#   packaging/manpage.sh BINARY OUT.1.gz
# Run by the build when COLDGATE_PACKAGE=ON (CMakeLists.txt). Needs help2man.
set -euo pipefail

binary=${1:?usage: manpage.sh BINARY OUT.1.gz}
out=${2:?usage: manpage.sh BINARY OUT.1.gz}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/coldgate-man.XXXXXX")
trap 'rm -rf "$work" "$out.tmp"' EXIT

# The command names: the lines under "Subcommands:" of the top-level help (CLI11's layout, two
# spaces, the name, the summary).
commands=$("$binary" --help | awk '/^Subcommands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }')
[[ -n "$commands" ]] || { echo "manpage.sh: $binary --help lists no commands" >&2; exit 1; }

{
  echo "[COMMANDS]"
  for command in $commands; do
    # CLI11's help: the summary, "Usage: …", then sections ("Positionals:", "Options:") whose
    # entries start with two spaces (a description past column 30 continues on the next line,
    # indented further), then the footer. The footer and -h,--help are the top level's.
    "$binary" "$command" --help | awk -v command="$command" '
      function esc(s) { gsub(/\\/, "\\e", s); sub(/^[.\047]/, "\\\\\\&&", s); return s }
      function term(s) { s = esc(s); gsub(/-/, "\\-", s); return "\\fB" s "\\fR" }
      NR == 1 { summary = $0; next }
      /^Usage: / {
        usage = substr($0, 8)
        printf ".SS \"%s\"\n%s\n", esc(usage), esc(summary); next }
      /^Positionals:$/ { print ".PP\nArguments:"; section = 1; next }
      /^Options:$/ { print ".PP\nOptions:"; section = 1; next }
      /^Exit codes:/ { exit }
      /^$/ { section = 0; next }
      section && /^  [^ ]/ {
        entry = substr($0, 3)
        if (entry ~ /^-h,--help /) { skip = 1; next }
        skip = 0
        # name and description are apart by two spaces or more; a long name ends the line.
        if (match(entry, /  +/)) { name = substr(entry, 1, RSTART - 1); text = substr(entry, RSTART + RLENGTH) }
        else { name = entry; text = "" }
        if (name ~ /^-[^ ,]+,-/) sub(/,/, ", ", name)  # -c,--config; not TEXT:{up,down}
        printf ".TP\n%s\n", term(name)
        if (text != "") print esc(text)
        next }
      section && /^   / { if (!skip) { sub(/^ +/, ""); print esc($0) } next }
      { print esc($0) }'
  done
  cat "$here/manpage.h2m"
} >"$work/coldgate.h2m"

help2man --locale=C.UTF-8 --no-info --section=1 \
  --name="measure PostgreSQL-backed start-up cold, keep snapshots, gate pull requests" \
  --include="$work/coldgate.h2m" --output="$work/coldgate.1" "$binary"
# Atomic: a temporary file beside OUT, then the rename.
gzip -9n <"$work/coldgate.1" >"$out.tmp"
mv -f "$out.tmp" "$out"
