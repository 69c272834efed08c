/* libgreet.so: linked at start (DT_NEEDED) by main.c. */
int greet_total;

int greet(int i)
{
	greet_total += i; /* GREET_BODY */
	return greet_total;
}
