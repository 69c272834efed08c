/* Calls a function of its own shared library (DT_NEEDED) 300 times, then
 * loads a second library with dlopen, calls it 200 times, unloads it, loads
 * it again and calls it 50 more times: greet 300, plug 250, plug_calls 2. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int greet(int i);

static int use_plugin(const char *path, int n)
{
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		exit(2);
	}
	int (*plug)(int) = (int (*)(int))dlsym(h, "plug");
	int (*plug_calls)(void) = (int (*)(void))dlsym(h, "plug_calls");
	int s = 0;
	for (int i = 0; i < n; i++)
		s += plug(i);
	int c = plug_calls();
	dlclose(h);
	return s + c;
}

int main(int argc, char **argv)
{
	char path[4096];
	const char *dir = argc > 1 ? argv[1] : ".";
	int g = 0;
	for (int i = 0; i < 300; i++)
		g = greet(i);
	snprintf(path, sizeof path, "%s/libplug.so", dir);
	int a = use_plugin(path, 200);
	int b = use_plugin(path, 50);
	printf("greet %d plugin %d %d\n", g, a, b);
	return 0;
}
