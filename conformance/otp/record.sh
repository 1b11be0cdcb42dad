#!/usr/bin/env bash
# Records the conformance cases on real Erlang/OTP (docs/conformance.md).
#
#   conformance/otp/record.sh --tool BUILD/lic-conformance [--out DIR] [--unit MS] [--update | --check] [CASE.yaml...]
#
# Each case (default: every conformance/otp/cases/*.yaml) is exported as Erlang terms by
# lic-conformance, then one VM (lic_otp_record.escript) runs them one after another and writes
# DIR/NAME.otp.jsonl. --update copies the recordings beside the cases (to commit them); --check
# (the otp-live CTest) compares each fresh recording with the committed one and with the
# simulator, and prints the number of cases and of listed exceptions.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tool=""; out=""; unit=100; mode=record; cases=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tool) tool="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --unit) unit="$2"; shift 2 ;;
    --update) mode=update; shift ;;
    --check) mode=check; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) cases+=("$1"); shift ;;
  esac
done
[ -n "$tool" ] || { echo "record.sh: --tool BUILD/lic-conformance is required" >&2; exit 2; }
command -v escript >/dev/null || { echo "record.sh: no escript: install Erlang (tools/setup.sh --otp)" >&2; exit 2; }
[ ${#cases[@]} -gt 0 ] || cases=("$here"/cases/*.yaml)
[ -n "$out" ] || out="$(mktemp -d)"
rm -rf "$out"; mkdir -p "$out/terms"
terms=()
for c in "${cases[@]}"; do
  n="$(basename "$c" .yaml)"
  "$tool" export "$c" "$out/terms/$n.terms"
  terms+=("$out/terms/$n.terms")
done
start=$(date +%s)
escript "$here/lic_otp_record.escript" --unit "$unit" "$out" "${terms[@]}" | tail -n 1
echo "recording took $(( $(date +%s) - start )) s"
for c in "${cases[@]}"; do
  n="$(basename "$c" .yaml)"
  { echo "{\"ev\":\"meta\",\"unit_ms\":$unit}"; cat "$out/$n.otp.jsonl"; } > "$out/$n.tmp" && mv "$out/$n.tmp" "$out/$n.otp.jsonl"
done
case "$mode" in
  update) for c in "${cases[@]}"; do n="$(basename "$c" .yaml)"; cp "$out/$n.otp.jsonl" "$(dirname "$c")/$n.otp.jsonl"; done
          echo "updated ${#cases[@]} recordings" ;;
  check)
    stale=0; differ=0; expected=0
    for c in "${cases[@]}"; do
      n="$(basename "$c" .yaml)"
      if ! "$tool" same "$(dirname "$c")/$n.otp.jsonl" "$out/$n.otp.jsonl"; then stale=$((stale + 1)); fi
      if r="$("$tool" compare "$c" "$out/$n.otp.jsonl" --expected "$here/expected.txt")"; then
        case "$r" in *"EXPECTED DIFFERENCE"*) expected=$((expected + 1)) ;; esac
      else
        echo "$r" | head -n 5; differ=$((differ + 1))
      fi
    done
    echo "otp-live: ${#cases[@]} cases on OTP $(erl -noshell -eval 'io:put_chars(erlang:system_info(otp_release)), halt().'):" \
         "$stale stale recordings, $differ unexpected differences, $expected listed exceptions"
    [ "$stale" = 0 ] && [ "$differ" = 0 ] ;;
  *) echo "recordings in $out" ;;
esac
