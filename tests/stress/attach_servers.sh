#!/bin/sh
# make soak-attach: CYCLES (default 50) attach/detach cycles of ms-record -p
# on real servers under load (python3's http.server, redis, nginx's master,
# memcached, a sqlite3 shell) and on 200 threads that never stop
# allocating.  Among the cycles: the server stopped at the detach (every
# 10th), ms-record killed with SIGKILL (every 10th, offset 5), and for
# nginx a HUP (new workers forked while the master is attached).  Per
# server it prints the cycles, the failed ones, the error records, the
# load's client errors, whether the process lives, is attachable again,
# holds no ring pages and whether a forked worker kept hooks.  Exit 1 if
# any figure is not as it should be.
set -u
CYCLES=${CYCLES:-50}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
PATH=$TOP/tools:$PATH
export PATH
OUT=$(mktemp -d /tmp/memscope-soak.XXXXXX)
PORT_BASE=${PORT_BASE:-18400}
bad=0
pids=
trap 'for p in $pids; do kill $p 2>/dev/null; done' EXIT

wait_port() {	# wait_port PORT
	_i=0
	while [ $_i -lt 200 ] && ! python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 1)" 2>/dev/null; do
		sleep 0.05
		_i=$((_i + 1))
	done
}

# Whether the process records (after the last detach it must not).
recorded() { ms-snap -p "$1" 2>/dev/null | grep -c '"recorded":true'; }
until_recorded() {
	_i=0
	while [ $_i -lt 200 ] && [ "$(recorded "$1")" = 0 ]; do
		sleep 0.05
		_i=$((_i + 1))
	done
}

# load NAME COMMAND...: runs COMMAND (true when a request worked) in a loop
# in the background, counting its failures in $OUT/NAME.cerr
load() {
	_ln=$1
	shift
	(n=0; while :; do "$@" || n=$((n + 1)); echo $n >"$OUT/$_ln.cerr"; done) &
	pids="$pids $!"
}
redis_set() { [ "$(redis-cli -p "$1" set k v 2>/dev/null)" = OK ]; }

medmax() {	# medmax COLUMN FILE: "median/max" of a column of numbers
	sort -n -k"$1" "$2" 2>/dev/null | awk -v c="$1" '{ v[NR] = $c }
		END { if (NR) printf "%s/%s", v[int((NR + 1) / 2)], v[NR]; else printf "-" }'
}

cycles() {	# cycles NAME PID [hup]: runs the cycles, prints the line
	_name=$1 _pid=$2 _hup=${3:-}
	_fail=0 _errs=0 _n=0
	: >"$OUT/$_name.err"
	while [ $_n -lt "$CYCLES" ]; do
		_n=$((_n + 1))
		rm -f "$OUT/$_name.ndjson"
		if [ $((_n % 10)) = 5 ]; then
			# killed mid-session: the next cycle must attach at once
			ms-record -q -p "$_pid" -o "$OUT/$_name.ndjson" 2>>"$OUT/$_name.err" &
			_r=$!
			until_recorded "$_pid"
			kill -KILL $_r
			wait $_r 2>/dev/null
			continue
		fi
		if [ $((_n % 10)) = 0 ]; then
			# stopped when the detach comes
			ms-record -q -p "$_pid" -o "$OUT/$_name.ndjson" 2>"$OUT/$_name.stop" &
			_r=$!
			until_recorded "$_pid"
			kill -STOP "$_pid"
			kill -INT $_r
			sleep 0.2
			kill -CONT "$_pid"
			wait $_r || _fail=$((_fail + 1))
		else
			$NICE ms-record -p "$_pid" --duration 0.2s -o "$OUT/$_name.ndjson" \
				2>"$OUT/$_name.one" || _fail=$((_fail + 1))
			# the summary line says how long the thread was stopped
			sed -n 's/.*thread stopped \([0-9.]*\) ms to attach, \([0-9.]*\) ms to detach.*/\1 \2/p' \
				"$OUT/$_name.one" >>"$OUT/$_name.stops"
			grep -v 'thread stopped' "$OUT/$_name.one" >>"$OUT/$_name.err"
		fi
		_e=$(jq -r 'select(.type=="end") | .errors' "$OUT/$_name.ndjson" 2>/dev/null | tail -1)
		_errs=$((_errs + ${_e:-0}))
		[ -n "$_hup" ] && [ $((_n % 10)) = 3 ] && kill -HUP "$_pid"
		echo "cycle $_n: errors ${_e:-?}, state $(cut -d' ' -f3 /proc/"$_pid"/stat 2>/dev/null)" >>"$OUT/$_name.cycles"
	done
	_st=$(cut -d' ' -f3 /proc/"$_pid"/stat 2>/dev/null)
	_alive=$(case ${_st:-Z} in Z | X) echo NO ;; *) echo yes ;; esac)
	_again=$(ms-record -q -p "$_pid" --duration 0.1s -o "$OUT/$_name.again" 2>/dev/null && echo yes || echo NO)
	_shm=$(awk '/^RssShmem:/ { print $2 }' /proc/"$_pid"/status 2>/dev/null)
	_rec=$(recorded "$_pid")
	_stops="$(medmax 1 "$OUT/$_name.stops") $(medmax 2 "$OUT/$_name.stops")"
	echo "$_name $CYCLES $_fail $_errs $_alive $_again ${_shm:-?} $_rec $_stops"
	{ [ $_fail = 0 ] && [ $_errs = 0 ] && [ $_alive = yes ] && [ $_again = yes ] &&
		[ "$_rec" = 0 ] && [ "${_shm:-999999}" -le 2048 ]; } || echo "$_name" >>"$OUT/bad"
}

# report LINE CLIENT_ERRORS: prints the line; client errors are a failure
report() {
	echo "$1 $2"
	case $2 in 0 | -) ;; *) echo "${1%% *} (client errors)" >>"$OUT/bad" ;; esac
}

# dead PID NAME: says how a server that died ended
dead() {
	case $(cut -d' ' -f3 /proc/"$1"/stat 2>/dev/null) in
	Z | X | '') wait "$1"; echo "$2 ended with status $? (128 + signal)" ;;
	esac
}

# want NAME: the servers to run, SERVERS="redis nginx" (all by default)
want() { [ -z "${SERVERS:-}" ] || case " $SERVERS " in *" $1 "*) true ;; *) false ;; esac; }

printf '%-12s %6s %6s %6s %5s %6s %9s %8s %s\n' server cycles failed errors alive again 'shm(KiB)' recorded \
	'stopped ms, median/max: attach, detach; client errors'

# python3's http.server: a thread per request
if want http.server; then
P=$PORT_BASE
(cd "$OUT" && exec python3 -m http.server $P --bind 127.0.0.1 >/dev/null 2>&1) &
HP=$!
pids="$pids $HP"
wait_port $P
load http curl -sf -o /dev/null http://127.0.0.1:$P/
NICE= line=$(cycles http.server $HP)
report "$line" "$(cat "$OUT/http.cerr")"
dead $HP http.server
kill $HP
fi

# redis
if ! want redis; then :; elif command -v redis-server >/dev/null; then
	P=$((PORT_BASE + 1))
	redis-server --port $P --save '' --appendonly no >/dev/null 2>&1 &
	RP=$!
	pids="$pids $RP"
	wait_port $P
	redis-benchmark -p $P -q -l -c 8 -P 16 -t set,get,lpush,lpop >/dev/null 2>&1 &
	pids="$pids $!"
	load redis redis_set $P
	NICE= line=$(cycles redis $RP)
	report "$line" "$(cat "$OUT/redis.cerr")"
	dead $RP redis
	kill $RP
else
	echo "redis: SKIP (redis-server not installed)"
fi

# nginx: the master, its workers forked again by HUPs while attached
if ! want nginx; then :; elif command -v nginx >/dev/null; then
	P=$((PORT_BASE + 2))
	mkdir -p "$OUT/nginx/logs" "$OUT/nginx/www"
	echo hello >"$OUT/nginx/www/index.html"
	chmod 755 "$OUT" "$OUT/nginx" "$OUT/nginx/www"	# its workers run as nobody
	chmod 644 "$OUT/nginx/www/index.html"
	cat >"$OUT/nginx/nginx.conf" <<EOF
worker_processes 2;
pid $OUT/nginx/nginx.pid;
error_log $OUT/nginx/logs/error.log;
daemon off;
events { worker_connections 256; }
http { access_log off; server { listen 127.0.0.1:$P; root $OUT/nginx/www; } }
EOF
	nginx -p "$OUT/nginx" -c "$OUT/nginx/nginx.conf" &
	NP=$!
	pids="$pids $NP"
	wait_port $P
	load nginx curl -sf -o /dev/null http://127.0.0.1:$P/
	NICE= line=$(cycles nginx $NP hup)
	report "$line" "$(cat "$OUT/nginx.cerr")"
	dead $NP nginx
	kill $NP
else
	echo "nginx: SKIP (nginx not installed)"
fi

# memcached
if ! want memcached; then :; elif command -v memcached >/dev/null; then
	P=$((PORT_BASE + 3))
	memcached -u root -l 127.0.0.1 -p $P -t 4 >/dev/null 2>&1 &
	MP=$!
	pids="$pids $MP"
	wait_port $P
	python3 - $P "$OUT/memcached.cerr" <<'EOF' &
import socket, sys, random
port, out = int(sys.argv[1]), sys.argv[2]
errs = 0
s = socket.create_connection(("127.0.0.1", port))
f = s.makefile("rwb")
i = 0
def one():
    global errs
    k = b"k%d" % random.randrange(10000)
    v = b"x" * random.randrange(1, 4000)
    f.write(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v)); f.flush()
    if f.readline() != b"STORED\r\n":
        errs += 1
    f.write(b"get %s\r\n" % k); f.flush()
    line = f.readline()
    if line.startswith(b"VALUE"):
        f.read(int(line.split()[3]) + 2); f.readline()
    elif line != b"END\r\n":
        errs += 1
try:
    while True:
        one()
        i += 1
        if i % 1000 == 0:
            open(out, "w").write("%d\n" % errs)
except (ConnectionError, OSError):
    pass	# memcached stopped at the end
EOF
	pids="$pids $!"
	NICE= line=$(cycles memcached $MP)
	report "$line" "$(cat "$OUT/memcached.cerr" 2>/dev/null || echo 0)"
	dead $MP memcached
	kill $MP
else
	echo "memcached: SKIP (memcached not installed)"
fi

# a sqlite3 shell, fed statements through a pipe
if ! want sqlite3; then :; elif command -v sqlite3 >/dev/null; then
	mkfifo "$OUT/sql.fifo"
	sqlite3 "$OUT/soak.db" <"$OUT/sql.fifo" >/dev/null 2>"$OUT/sqlite.stderr" &
	SP=$!
	pids="$pids $SP"
	(echo "create table t(a, b);"; i=0; while :; do
		echo "insert into t values($i, hex(randomblob(200))); delete from t where a < $i - 1000;"
		echo "select count(*), sum(length(b)) from t;"
		i=$((i + 1))
	done) >"$OUT/sql.fifo" &
	pids="$pids $!"
	sleep 0.5
	NICE= line=$(cycles sqlite3 $SP)
	report "$line" "$(wc -l <"$OUT/sqlite.stderr")"
	dead $SP sqlite3
	kill $SP
fi

# 200 threads that never stop allocating (ms-record at nice -10, see
# ms-record(1) on a machine its target saturates)
if want 200-threads; then
cc -O2 -pthread -o "$OUT/many" -x c - <<'EOF'
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
static void *churn(void *a)
{
	void *keep[64] = { 0 };
	unsigned i = 0;

	for (;;) {
		free(keep[i % 64]);
		keep[i % 64] = malloc(16 + (size_t)a % 200 + i % 50);
		if ((++i & 1023) == 0)
			usleep(100);
	}
	return NULL;
}
int main(void)
{
	pthread_t t;
	long i;

	for (i = 0; i < 200; i++)
		pthread_create(&t, NULL, churn, (void *)i);
	pause();
	return 0;
}
EOF
"$OUT/many" &
TP=$!
pids="$pids $TP"
sleep 0.5
NICE="nice -n -10" line=$(cycles 200-threads $TP)
report "$line" -
dead "$TP" 200-threads
kill $TP
fi
for p in $pids; do kill $p 2>/dev/null; done
wait 2>/dev/null
pids=
[ -e "$OUT/bad" ] && bad=1
if [ $bad = 0 ]; then rm -rf "$OUT"; else echo "not as it should be: $(cat "$OUT/bad" | tr '\n' ' '); kept: $OUT"; fi
exit $bad
