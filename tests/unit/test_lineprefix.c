/*
 * Unit tests for src/text/lineprefix.c. Expected lengths are counted by
 * hand from the literal prefixes (each case names what it is).
 */
#include "harness.h"
#include "trainscope/core.h"
#include "trainscope/lineprefix.h"

static size_t lp(const char *s, int64_t *rank)
{
	return ts_launcher_prefix(s, strlen(s), rank);
}

TEST(lineprefix_launchers)
{
	int64_t r = -1;

	/* srun -l: "12:" is 3 bytes; the blank after it is not the prefix's */
	CHECK_I64((int64_t)lp("12: [2024-04-06] iteration", &r), 3);
	CHECK_I64(r, 12);
	CHECK_I64((int64_t)lp("0:", &r), 2);
	CHECK_I64(r, 0);
	/* padded to the widest task number: " 3:" is 3 bytes */
	CHECK_I64((int64_t)lp(" 3: x", &r), 3);
	CHECK_I64(r, 3);
	CHECK_I64((int64_t)lp("    0     86     33", &r), 0);
	CHECK_I64((int64_t)lp(" [default3]:x", &r), 0);
	/* a time is no srun prefix, nor a host name */
	CHECK_I64((int64_t)lp("10:27:27 INFO", &r), 0);
	CHECK_I64((int64_t)lp("10.0.0.1:123:456 [0] NCCL INFO", &r), 0);
	/* torchrun: "[default3]:" is 11 bytes, "[trainer_a17]:" 14 */
	CHECK_I64((int64_t)lp("[default3]:[rank3]:[E901 ...]", &r), 11);
	CHECK_I64(r, 3);
	CHECK_I64((int64_t)lp("[trainer_a17]:x", &r), 14);
	CHECK_I64(r, 17);
	CHECK_I64((int64_t)lp("[Default3]:x", &r), 0);
	CHECK_I64((int64_t)lp("[rank3]:[E901 ...]", &r), 0);
	CHECK_I64((int64_t)lp("[default3] x", &r), 0);
	/* torchx (NeMo-Run) before torchrun: "retraining/0 [default1]:" is 24
	 * bytes, the rank torchrun's */
	CHECK_I64((int64_t)lp("retraining/0 [default1]:Training epoch 0", &r), 24);
	CHECK_I64(r, 1);
	CHECK_I64((int64_t)lp("my-job.v2/12 [default0]:x", &r), 24);
	CHECK_I64(r, 0);
	r = -1;
	CHECK_I64((int64_t)lp("retraining/0 [1,3]<stdout>:x", &r), 0);
	CHECK_I64((int64_t)lp("retraining/0 x", &r), 0);
	CHECK_I64((int64_t)lp("retraining/ [default1]:x", &r), 0);
	CHECK_I64((int64_t)lp("path/to/file [default1]:x", &r), 0);
	CHECK_I64((int64_t)lp("retraining/0 [default1]", &r), 0);
	CHECK_I64(r, -1);
	/* mpirun --tag-output: "[1,3]<stderr>:" is 14 bytes */
	CHECK_I64((int64_t)lp("[1,3]<stderr>:text", &r), 14);
	CHECK_I64(r, 3);
	CHECK_I64((int64_t)lp("[1,3]<stdout>", &r), 0);
	/* glog and reporter numbers are the hang reader's, not launchers' */
	CHECK_I64((int64_t)lp("[E901 05:20:03.118 ProcessGroupNCCL.cpp:1685] x", &r), 0);
	CHECK_I64((int64_t)lp("[80746] x", &r), 0);
	CHECK_I64((int64_t)lp("", &r), 0);
}

/* The replica (node) of a torchx prefix: the global rank is replica x
 * nproc_per_node + the local rank ts_launcher_prefix gives. */
TEST(lineprefix_replica)
{
#define rp(s) ts_launcher_replica((s), sizeof(s) - 1)
	CHECK_I64(rp("retraining/1 [default0]:Training epoch 0"), 1);
	CHECK_I64(rp("my-job.v2/12 [default3]:x"), 12);
	CHECK_I64(rp("retraining/0 [default1]:x"), 0);
	CHECK_I64(rp("[default1]:x"), -1);
	CHECK_I64(rp("3: x"), -1);
	CHECK_I64(rp("retraining/1 [1,3]<stdout>:x"), -1);
	CHECK_I64(rp("retraining/1 [default1]"), -1);
	CHECK_I64(rp("path/to/file [default1]:x"), -1);
	CHECK_I64(rp(""), -1);
#undef rp
}

TEST(lineprefix_collector_stamps)
{
	/* kubectl logs --timestamps: 30 bytes of stamp and one blank */
	const char *k8s = "2025-09-01T05:20:03.118748741Z   [7] finished";
	CHECK_I64((int64_t)ts_collector_stamp(k8s, strlen(k8s)), 31);
	CHECK_I64((int64_t)ts_collector_stamp("2025-09-01T05:20:03Z x", 22), 21);
	CHECK_I64((int64_t)ts_collector_stamp("2025-09-01T05:20:03+02:00 x", 27), 26);
	CHECK_I64((int64_t)ts_collector_stamp("2025-09-01T05:20:03.5 x", 23), 22);
	/* no blank after it, a space instead of the T, a bare date: none */
	CHECK_I64((int64_t)ts_collector_stamp("2025-09-01T05:20:03Z", 20), 0);
	CHECK_I64((int64_t)ts_collector_stamp("2025-09-01 05:20:03 x", 21), 0);
	CHECK_I64((int64_t)ts_collector_stamp("2025-09-01 x", 12), 0);
	CHECK_I64((int64_t)ts_collector_stamp("2025-09-01T05:20:03.Z x", 23), 0);
}

TEST(lineprefix_ansi)
{
	struct ts_sb sb;
	const char *coloured = "\x1b[32m0: iteration 5\x1b[0m";

	ts_sb_init(&sb);
	CHECK_I64(ts_ansi_strip(&sb, "plain", 5), 0);
	REQUIRE(ts_ansi_strip(&sb, coloured, strlen(coloured)) == 1);
	REQUIRE(!sb.failed);
	CHECK_I64((int64_t)sb.len, 14);
	CHECK(memcmp(sb.buf, "0: iteration 5", 14) == 0);
	/* a cursor move and an ESC cut at the end */
	REQUIRE(ts_ansi_strip(&sb, "a\x1b[2Kb\x1b[", 8) == 1);
	CHECK_I64((int64_t)sb.len, 2);
	CHECK(memcmp(sb.buf, "ab", 2) == 0);
	ts_sb_release(&sb);
}

TEST(lineprefix_progress_bars)
{
	/* the bar of a is its first 78 bytes, its bracket 37 (len() of the literals) */
	const char *a = "Epoch 0:   6%|##        | 32040/500150 [6:28:43<94:39:17,  1.37it/s, "
			"loss=2.6]" "[E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog caught";
	const char *b = "Epoch 80:  67% 10/15 [02:53<01:18, 15.76s/it, loss=0.429, v_num=l1_0]";
	const char *c = "Validation: 12it [00:03,  3.50it/s]";
	const char *in;
	size_t in_n;

	CHECK_I64((int64_t)ts_progress_bar(a, strlen(a), &in, &in_n), 78);
	CHECK_I64((int64_t)in_n, 37);
	CHECK(memcmp(in, "6:28:43<", 8) == 0);
	CHECK_I64((int64_t)ts_progress_bar(b, strlen(b), &in, &in_n), (int64_t)strlen(b));
	CHECK_I64((int64_t)ts_progress_bar(c, strlen(c), &in, &in_n), (int64_t)strlen(c));
	/* glog headers, NCCL lines and Megatron timestamps are no bars */
	const char *d = "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog";
	const char *e = "host01:191370:191425 [1] NCCL INFO AllGather: opCount d [nranks=2]";
	const char *f = " [2024-04-06 10:27:27.123456] iteration       10/    1000 | consumed";
	CHECK_I64((int64_t)ts_progress_bar(d, strlen(d), &in, &in_n), 0);
	CHECK_I64((int64_t)ts_progress_bar(e, strlen(e), &in, &in_n), 0);
	CHECK_I64((int64_t)ts_progress_bar(f, strlen(f), &in, &in_n), 0);
}

TEST(lineprefix_progress_bar_open)
{
	/* a bar cut inside its bracket: the content is its 48 bytes from "00:40" */
	const char *a = "Epoch 0: 100%|#####     | 20/20 [00:40<00:00, 2.00s/it, v_num=0, "
			"global_step=20.0";
	const char *b = "Epoch 0: 100%|#####     | 20/20 [00:40<00:00, 2.00s/it, v_num=0]";
	const char *c = "Epoch 0: 100%|#####     | 20/2";
	const char *d = " [2024-04-06 10:27:27.123456] iteration       10/    1000 | consumed";
	const char *in;
	size_t in_n;

	CHECK_I64(ts_progress_bar_open(a, strlen(a), &in, &in_n), 1);
	CHECK_I64((int64_t)in_n, 48);
	CHECK(memcmp(in, "00:40<", 6) == 0);
	CHECK_I64((int64_t)ts_progress_bar(a, strlen(a), &in, &in_n), 0);
	/* a closed bracket is ts_progress_bar's; no bracket, or no bar, is none */
	CHECK_I64(ts_progress_bar_open(b, strlen(b), &in, &in_n), 0);
	CHECK_I64(ts_progress_bar_open(c, strlen(c), &in, &in_n), 0);
	CHECK_I64(ts_progress_bar_open(d, strlen(d), &in, &in_n), 0);
}
