/* libplug.so: loaded with dlopen by main.c, twice. */
static int calls;

int plug(int x)
{
	calls++; /* PLUG_BODY */
	return x * 2;
}

int plug_calls(void)
{
	return calls;
}
