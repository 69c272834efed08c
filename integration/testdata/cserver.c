/*
 * cserver.c: a small HTTP/1.1 server on loopback, the C server that
 * patchprof attaches to under load (issue 27; cmd/patchprof-bench's cserver
 * workload, integration/server_test.go). It listens on 127.0.0.1 at an
 * ephemeral port and prints "listening PORT"; a thread per connection reads
 * requests and answers each one ("HTTP/1.1 200 OK", body "hello\n") with
 * keep-alive, through one call of handle_request per request: the count
 * patchprof must find equal to the requests made. When its standard input
 * ends it prints "served N", the requests it answered, and exits 0.
 */
#define _GNU_SOURCE /* memmem */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static long served;

static const char reply[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
			    "Content-Length: 6\r\n\r\nhello\n";

/* handle_request answers one request (its headers, n bytes) into out and
 * returns the answer's length: one call per request. */
__attribute__((noinline)) size_t
handle_request(const char *req, size_t n, char *out)
{
	(void)req;
	(void)n;
	__atomic_fetch_add(&served, 1, __ATOMIC_RELAXED);
	memcpy(out, reply, sizeof reply - 1);
	return sizeof reply - 1;
}

/* writeall writes n bytes of p to fd; -1 on an error. */
static int
writeall(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* connection serves one connection until the client closes it. */
static void *
connection(void *arg)
{
	int fd = (int)(long)arg;
	char buf[8192], out[256];
	size_t len = 0;

	for (;;) {
		ssize_t k = read(fd, buf + len, sizeof buf - len);
		char *end;

		if (k <= 0)
			break;
		len += (size_t)k;
		/* Every complete request (headers end with an empty line; the
		 * load generator sends no body) gets its answer. */
		while ((end = memmem(buf, len, "\r\n\r\n", 4)) != NULL) {
			size_t n = (size_t)(end - buf) + 4;
			size_t m = handle_request(buf, n, out);

			if (writeall(fd, out, m) < 0)
				goto done;
			memmove(buf, buf + n, len - n);
			len -= n;
		}
		if (len == sizeof buf)
			break; /* a request larger than the buffer */
	}
done:
	close(fd);
	return NULL;
}

/* watch exits when standard input ends, saying how many requests the
 * server answered. */
static void *
watch(void *arg)
{
	char c;

	(void)arg;
	while (read(0, &c, 1) > 0)
		;
	printf("served %ld\n", __atomic_load_n(&served, __ATOMIC_RELAXED));
	fflush(stdout);
	_exit(0);
}

int
main(void)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof a;
	pthread_attr_t detached;
	pthread_t t;
	int one = 1;
	int s = socket(AF_INET, SOCK_STREAM, 0);

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 128) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &alen) < 0) {
		perror("cserver");
		return 1;
	}
	pthread_attr_init(&detached);
	pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &detached, watch, NULL) != 0) {
		perror("pthread_create");
		return 1;
	}
	printf("listening %d\n", ntohs(a.sin_port));
	fflush(stdout);
	for (;;) {
		int c = accept(s, NULL, NULL);

		if (c < 0)
			continue;
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		if (pthread_create(&t, &detached, connection, (void *)(long)c) != 0)
			close(c);
	}
}
