#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	for (int r = 0; r < 3; r++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
		void *junk = malloc(1 << 20); /* shift later mappings */
		int (*w)(int) = (int (*)(int))dlsym(h, "work");
		printf("round %d: %d\n", r, w(100));
		dlclose(h);
		(void)junk;
		if (r == 0) { void *m = dlopen("libm.so.6", RTLD_NOW); (void)m; }
	}
	return 0;
}
