/* The program of pprofExample in pprof_test.go; only line numbers matter. */
int main(void) {
	for (int i = 0; i < 1000; i++)
		work();
	return 0;
}
void work(void) {
}
void never(void) { }
