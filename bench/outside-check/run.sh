#!/bin/bash
# The outside check, built apart from the bench the simple way: a redis-server, the example as
# `npm run example` starts it (REDIS_URL set, its embedded simulator), the floor beside it
# (bench/apps/floor.js, the bench's floor too), one logged-in session each, autocannon -c 32
# against GET /api/me in PAIRS alternating pairs of DUR s windows after WARM s of warm-up; CPU per
# request from /proc (Linux). Every pair starts both apps afresh: a process keeps its speed for
# life, and two started alike differ by several per cent on a small VM. Run `npm run build` first.
#   bench/outside-check/run.sh            # 10 pairs of 4 s, on ioredis (CLIENT=redis: node-redis)
#   FLOOR_FLAGS="F_MEMORY=1" bench/outside-check/run.sh  # against the bound: the floor on MemoryStore
#   BASE=../base bench/outside-check/run.sh   # the floor's place: the example of another checkout (npm ci'd)
set -e
cd "$(dirname "$0")/../.."
PAIRS=${PAIRS:-10}; DUR=${DUR:-4}; WARM=${WARM:-2}; CLIENT=${CLIENT:-ioredis}
TMP=$(mktemp -d)
RP=$(node -e 's=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
redis-server --port $RP --save '' --appendonly no --daemonize no >/dev/null & RPID=$!
trap 'kill $EPID $FPID $RPID 2>/dev/null; rm -rf $TMP' EXIT
sleep 0.5
fail() { echo "outside check: $*" >&2; exit 1; }
start_example() { # dir log -> the example's port and cookie, once its simulator's lobby let a player in
  (cd $1 && REDIS_CLIENT=$CLIENT REDIS_URL=redis://127.0.0.1:$RP PORT=0 exec node -r esbuild-register example-app/server.ts) > $2 2>&1 &
  local pid=$! i; for i in $(seq 150); do grep -q 'Example game backend' $2 && break; sleep 0.2; done
  local port=$(grep -o 'Example game backend: http://[^:]*:[0-9]*' $2 | grep -o '[0-9]*$')
  local lobby=$(grep -o 'http://127.0.0.1:[0-9]*/$' $2 | head -1); local sim=${lobby%/}
  local loc=$(curl -s -o /dev/null -w '%{redirect_url}' "$sim/enter")
  echo $pid $port $(curl -s -D - -o /dev/null -H "Referer: $sim/" -H 'Sec-Fetch-Site: same-site' -H 'Sec-Fetch-Mode: navigate' -H 'Sec-Fetch-Dest: document' "${loc/localhost/127.0.0.1}" | grep -i '^set-cookie: connect.sid' | sed 's/^[Ss]et-[Cc]ookie: //; s/;.*//')
}
start_apps() { # sets EP FP EPID FPID ECOOKIE FCOOKIE (the floor's: BASE's example, when given)
  read EPID EP ECOOKIE < <(start_example . $TMP/example.log)
  if [ -n "${BASE:-}" ]; then read FPID FP FCOOKIE < <(start_example $BASE $TMP/floor.log); else
    env $FLOOR_FLAGS CLIENT=$CLIENT REDIS_URL=redis://127.0.0.1:$RP PORT=0 node bench/apps/floor.js > $TMP/floor.log 2>&1 & FPID=$!
    local i; for i in $(seq 150); do grep -q listening $TMP/floor.log && break; sleep 0.2; done
    FP=$(grep -o 'floor listening [0-9]*' $TMP/floor.log | grep -o '[0-9]*$')
    FCOOKIE=$(curl -s -D - -o /dev/null http://127.0.0.1:$FP/login | grep -i '^set-cookie: connect.sid' | sed 's/^[Ss]et-[Cc]ookie: //; s/;.*//')
  fi
  [ -n "$EP" ] && [ -n "$FP" ] && [ -n "$ECOOKIE" ] && [ -n "$FCOOKIE" ] || fail "the apps did not start or log in: $(tail -3 $TMP/example.log $TMP/floor.log)"
}
stop_apps() { kill $EPID $FPID 2>/dev/null; while kill -0 $EPID || kill -0 $FPID; do sleep 0.1; done 2>/dev/null; EPID=; FPID=; }
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
TCK=$(getconf CLK_TCK)
run() { # seconds port cookie pid -> "rps cpu_us_per_req p99"; any answer but 200 fails the check
  local c0=$(cpu $4); local out=$(npx autocannon -c 32 -d $1 -j -H "Cookie=$3" http://127.0.0.1:$2/api/me 2>/dev/null); local c1=$(cpu $4)
  node -e 'const r=JSON.parse(process.argv[1]); const n=r["2xx"];
    if (r.non2xx + r.errors + r.timeouts > 0) { console.error("outside check: answers other than 2xx"); process.exit(1); }
    console.log((n/('$1')).toFixed(0), ((('$c1'-'$c0')/'$TCK')*1e6/n).toFixed(1), r.latency.p99)' "$out"
}
for i in $(seq $PAIRS); do
  start_apps
  run $WARM $EP "$ECOOKIE" $EPID >/dev/null; run $WARM $FP "$FCOOKIE" $FPID >/dev/null
  if (( i % 2 )); then e=$(run $DUR $EP "$ECOOKIE" $EPID); f=$(run $DUR $FP "$FCOOKIE" $FPID)
  else f=$(run $DUR $FP "$FCOOKIE" $FPID); e=$(run $DUR $EP "$ECOOKIE" $EPID); fi
  stop_apps
  echo "pair $i example[rps cpu_us p99] $e | floor $f"
  echo "$e $f" >> $TMP/pairs
done
# The ratios of all windows' totals, and the range of the pairs' own ratios (how far one pair can be off).
awk '{er+=$1; ec+=$1*$2; fr+=$4; fc+=$4*$5; r=$1/$4; c=$2/$5
  if (NR==1 || r<rmin) rmin=r; if (NR==1 || r>rmax) rmax=r; if (NR==1 || c<cmin) cmin=c; if (NR==1 || c>cmax) cmax=c}
  END {printf "example ÷ floor: req/s %.3f, CPU per request %.3f (pairs: req/s %.3f–%.3f, CPU %.3f–%.3f)\n", er/fr, (ec/er)/(fc/fr), rmin, rmax, cmin, cmax}' $TMP/pairs
