/* test_job_id.c — cluster-wide job ids (agent/jobs/job_id.c): the node number (configured,
 * derived from the name with a mesh, 0 without), ids of the form node * 10^9 + seq, and the
 * sequence wrapping before it reaches the node part. */
#include <string.h>

#include "../check.h"
#include "config.h"
#include "job_id.h"

static void test_node_number(void)
{
    CHECK_EQ(job_id_node_number(42, "node1", 1), 42);
    CHECK_EQ(job_id_node_number(0, "node1", 1), 0);
    CHECK_EQ(job_id_node_number(CONFIG_NODE_UNSET, "node1", 0), 0);
    uint32_t a = job_id_node_number(CONFIG_NODE_UNSET, "node1", 1);
    uint32_t b = job_id_node_number(CONFIG_NODE_UNSET, "node2", 1);
    CHECK(a >= 1 && a <= CONFIG_NODE_NUMBER_MAX, "derived number %u out of range", a);
    CHECK(b >= 1 && b <= CONFIG_NODE_NUMBER_MAX, "derived number %u out of range", b);
    CHECK(a != b, "node1 and node2 got the same number %u", a);
    /* the same name gives the same number on every start */
    CHECK_EQ(job_id_node_number(CONFIG_NODE_UNSET, "node1", 1), a);
}

static void test_next(void)
{
    struct {
        uint64_t next_job_id;
        uint32_t node_number;
    } a = {0, 0};
    a.node_number = 7;
    CHECK_EQ(job_id_next(&a.next_job_id, a.node_number), 7000000001ull);
    CHECK_EQ(job_id_next(&a.next_job_id, a.node_number), 7000000002ull);
    a.next_job_id = JOB_ID_NODE_FACTOR - 2;
    CHECK_EQ(job_id_next(&a.next_job_id, a.node_number), 7999999999ull);
    /* wrapped, never into node 8's ids */
    CHECK_EQ(job_id_next(&a.next_job_id, a.node_number), 7000000001ull);
    a.node_number = 0;
    a.next_job_id = 0;
    CHECK_EQ(job_id_next(&a.next_job_id, a.node_number), 1);
    a.node_number = CONFIG_NODE_NUMBER_MAX;
    a.next_job_id = JOB_ID_NODE_FACTOR - 2;
    uint64_t top = job_id_next(&a.next_job_id, a.node_number);
    CHECK(top < (1ull << 53), "id %llu not exact in a double", (unsigned long long)top);
}

int main(void)
{
    test_node_number();
    test_next();
    return 0;
}
