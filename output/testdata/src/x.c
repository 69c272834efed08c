#define MAX 100

main()
{
	register int i;
	int list[MAX];
	long random();

	for(i = 0; i < MAX; i++)
		list[i] = random();

	shell(list, MAX);
}

shell(v, n)
int v[], n;
{
	register int i, j, gap, temp;

	for(gap = n/2; gap > 0; gap /= 2)
		for(i = gap; i < n; i++)
			for(j=i-gap; j>=0 && v[j]>v[j+gap]; j-=gap) {
				temp = v[j];
				v[j] = v[j+gap];
				v[j+gap] = temp;
			}

}
