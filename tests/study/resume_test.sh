#!/bin/sh
# A sweep and a capacity search killed halfway (SIGTERM, SIGKILL) and resumed with --resume
# write exactly the files of an uninterrupted run, serially and with -j 2, and under MPI when
# MPIEXEC is given. Usage: resume_test.sh SERVESIM [MPIEXEC]
set -eu
servesim=$1
mpiexec=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# Starts `$@ --out DIR` in the background, sends SIGNAL once the journal holds two finished
# points, and checks the folder is left unfinished (a journal, no final files). (A
# background job of a non-interactive shell ignores SIGINT, so the test sends TERM and KILL.)
interrupt() {
  signal=$1
  dir=$2
  shift 2
  "$@" --out "$dir" > /dev/null 2>&1 &
  pid=$!
  tries=0
  while [ ! -f "$dir/journal.jsonl" ] || [ "$(wc -l < "$dir/journal.jsonl")" -lt 3 ]; do
    tries=$((tries + 1))
    [ $tries -lt 2000 ] || { echo "no point finished"; kill "$pid"; exit 1; }
    sleep 0.02
  done
  kill "-$signal" "$pid"
  wait "$pid" || true
  [ -f "$dir/journal.jsonl" ] || { echo "$dir finished before it was interrupted"; exit 1; }
  grep -q incomplete "$dir/summary.json" || { echo "$dir: no unfinished summary.json"; exit 1; }
}

# command.json records each folder's own command line (--resume DIR, not --out DIR).
same() {
  diff -r -x command.json "$1" "$2" > /dev/null ||
    { echo "$1 and $2 differ"; diff -r -x command.json "$1" "$2" | head; exit 1; }
}

sweep="sweep --grid rate=2,4,6,8,10,12,14,16,18,20,22,24 --num-requests 8000 --seed 3 --no-plots"
capacity="capacity --slo ttft_p99=0.3 --num-requests 16000 --rate 4 --precision 0.005"
for jobs in 1 2; do
  "$servesim" $sweep -j $jobs --out "sweep_ref$jobs" > /dev/null
  interrupt TERM "sweep_cut$jobs" "$servesim" $sweep -j $jobs
  "$servesim" $sweep -j $jobs --resume "sweep_cut$jobs" > /dev/null 2> resumed.txt
  grep -q "points already finished" resumed.txt || { echo "no resume"; cat resumed.txt; exit 1; }
  same "sweep_ref$jobs" "sweep_cut$jobs"

  "$servesim" $capacity -j $jobs --out "cap_ref$jobs" > /dev/null
  interrupt KILL "cap_cut$jobs" "$servesim" $capacity -j $jobs
  "$servesim" $capacity -j $jobs --resume "cap_cut$jobs" > /dev/null 2>&1
  same "cap_ref$jobs" "cap_cut$jobs"
done
same sweep_ref1 sweep_ref2

if [ -n "$mpiexec" ]; then
  # Two ranks finish the sweep above too soon to be cut: longer runs, the same points.
  mpi() { "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$servesim" "$@"; }
  long="sweep --grid rate=2,4,6,8,10,12,14,16,18,20,22,24 --num-requests 40000 --seed 3 --no-plots"
  "$servesim" $long -j 1 --out sweep_ref_long > /dev/null
  interrupt TERM sweep_cut_mpi mpi $long
  mpi $long --resume sweep_cut_mpi > /dev/null 2> resumed.txt
  grep -q "points already finished" resumed.txt || { echo "no MPI resume"; cat resumed.txt; exit 1; }
  same sweep_ref_long sweep_cut_mpi
fi

# A journal of another study is refused in one line, exit 3, leaving the folder as it was.
interrupt TERM other "$servesim" $sweep -j 1
cp -r other other_before
set +e
"$servesim" sweep --grid rate=2,4 --num-requests 8000 --resume other > out.txt 2> err.txt
code=$?
set -e
[ $code -eq 3 ] || { echo "resume of another study: exit $code"; cat err.txt; exit 1; }
[ "$(wc -l < err.txt)" -eq 1 ] || { echo "not one line:"; cat err.txt; exit 1; }
grep -q "journal of another study" err.txt || { cat err.txt; exit 1; }
same other_before other
echo "interrupted studies resume to the files of uninterrupted ones"
