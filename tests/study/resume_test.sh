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

# Starts `$@ --out DIR` in the background, sends SIGNAL once the journal (beside DIR, in
# .DIR.journal) holds two finished points, and checks that DIR is left as it was before (a
# previous run's files, or nothing). (A background job of a non-interactive shell ignores
# SIGINT, so the test sends TERM and KILL.)
interrupt() {
  signal=$1
  dir=$2
  shift 2
  rm -rf before
  if [ -d "$dir" ]; then cp -r "$dir" before; fi
  "$@" --out "$dir" > /dev/null 2>&1 &
  pid=$!
  tries=0
  journal=".$dir.journal/journal.jsonl"
  while [ ! -f "$journal" ] || [ "$(wc -l < "$journal")" -lt 3 ]; do
    tries=$((tries + 1))
    [ $tries -lt 2000 ] || { echo "no point finished"; kill "$pid"; exit 1; }
    sleep 0.02
  done
  kill "-$signal" "$pid"
  wait "$pid" || true
  [ -f "$journal" ] || { echo "$dir finished before it was interrupted"; exit 1; }
  if [ -d before ]; then
    diff -r before "$dir" > /dev/null || { echo "$dir changed by an interrupted study"; exit 1; }
  else
    [ ! -e "$dir" ] || { echo "$dir written by an interrupted study"; exit 1; }
  fi
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
  # A previous run in the folder stays as it was until the resumed study replaces it.
  "$servesim" sweep --grid rate=1 --num-requests 20 --no-plots --out "sweep_cut$jobs" > /dev/null
  interrupt TERM "sweep_cut$jobs" "$servesim" $sweep -j $jobs
  "$servesim" $sweep -j $jobs --resume "sweep_cut$jobs" > /dev/null 2> resumed.txt
  grep -q "points already finished" resumed.txt || { echo "no resume"; cat resumed.txt; exit 1; }
  same "sweep_ref$jobs" "sweep_cut$jobs"
  [ ! -e ".sweep_cut$jobs.journal" ] || { echo "journal left after the study finished"; exit 1; }

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

# A journal where servesim kept it before (OUT/journal.jsonl beside an "incomplete"
# summary.json, version 1, no digests) still resumes.
interrupt TERM legacy "$servesim" $sweep -j 1
mkdir legacy
sed -e 's/"servesim_journal":2/"servesim_journal":1/' -e 's/"digest":"[0-9a-f]*",//' \
  .legacy.journal/journal.jsonl > legacy/journal.jsonl
rm -r .legacy.journal
echo '{"incomplete": "an interrupted study"}' > legacy/summary.json
"$servesim" $sweep -j 1 --resume legacy > /dev/null 2> resumed.txt
grep -q "points already finished" resumed.txt || { echo "no legacy resume"; cat resumed.txt; exit 1; }
same sweep_ref1 legacy

# A journal of another study is refused in one line, exit 3, leaving it as it was.
interrupt TERM other "$servesim" $sweep -j 1
cp -r .other.journal other_before
set +e
"$servesim" sweep --grid rate=2,4 --num-requests 8000 --resume other > out.txt 2> err.txt
code=$?
set -e
[ $code -eq 3 ] || { echo "resume of another study: exit $code"; cat err.txt; exit 1; }
[ "$(wc -l < err.txt)" -eq 1 ] || { echo "not one line:"; cat err.txt; exit 1; }
grep -q "journal of another study" err.txt || { cat err.txt; exit 1; }
same other_before .other.journal
[ ! -e other ] || { echo "a refused resume wrote other"; exit 1; }
echo "interrupted studies resume to the files of uninterrupted ones"
