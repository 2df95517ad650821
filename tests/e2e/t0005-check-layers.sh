#!/bin/sh
# make check-layers passes on the tree, and fails, saying where, on a copy
# of libmsc with an upward include, an upward symbol, a cycle of modules,
# another stage's private header and a folder that is no stage.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2

STAGES=$(make -s -C "$TOP" --no-print-directory print-stages)
check_ne "the Makefile names libmsc's stages" "" "$STAGES"
# shellcheck disable=SC2086
check_status "the tree's stages go one way down" 0 sh "$TOP/tests/check-layers.sh" -C "$TOP" $STAGES

# fresh: a copy of libmsc as built.
fresh() {
	rm -rf tree && mkdir tree && cp -r "$TOP/libmsc" tree/
}
# layers: the check on the copy; its output in layers.out, its status said.
layers() {
	# shellcheck disable=SC2086
	sh "$TOP/tests/check-layers.sh" -C tree $STAGES >layers.out 2>&1
	echo $?
}
# obj STAGE NAME CODE: a module of that stage made of CODE.
obj() {
	printf '%s\n' "$3" >"tree/libmsc/$1/$2.c"
	cc -c -o "tree/libmsc/$1/$2.o" "tree/libmsc/$1/$2.c"
}

fresh
echo '#include "msc_report.h"' >>tree/libmsc/base/util.c
check_eq "an include up fails" 1 "$(layers)"
check_grep "  and says which" '^libmsc/base/util.c includes analyze/msc_report.h: up from base to analyze$' layers.out

fresh
obj base zz_up 'void msc_report_render(void); void zz_up(void) { msc_report_render(); }'
check_eq "a symbol up fails" 1 "$(layers)"
check_grep "  and says which" '^libmsc/base/zz_up.o uses msc_report_render from libmsc/render/[a-z_]*.o: up from base to render$' layers.out

fresh
obj io zz_a 'void zz_b(void); void zz_a(void) { zz_b(); }'
obj io zz_b 'void zz_a(void); void zz_b(void) { zz_a(); }'
check_eq "a cycle fails" 1 "$(layers)"
check_egrep "  and names its modules" '^modules in a cycle: io/zz_[ab] io/zz_[ab]$' layers.out

fresh
echo '#include "recorder_internal.h"' >>tree/libmsc/render/render.c
check_eq "another stage's private header fails" 1 "$(layers)"
check_grep "  and says which" "^libmsc/render/render.c includes record/recorder_internal.h, another stage's private header$" layers.out

fresh
mkdir tree/libmsc/misc
check_eq "a folder that is no stage fails" 1 "$(layers)"
check_grep "  and says which" '^check-layers: libmsc/misc is not a stage' layers.out

fresh
check_eq "the copy, as built, passes" 0 "$(layers)"
finish
