package source

import "fmt"

// The limits lane v1beta1 moved (spec/lane-v1beta1.md §7.1); every other
// limit is the same in both editions.

// kvKeyBytes is edge.kv maxKeyBytes: 512, or 467 on lane v1beta1.
func (e Edition) kvKeyBytes() int { return pick(e, 512, 467) }

// objectKeyBytes is edge.objects maxKeyBytes: 1024, or 979 on lane v1beta1.
func (e Edition) objectKeyBytes() int { return pick(e, 1024, 979) }

// queueMessageBytes is the decoded message limit of edge.queue
// (maxMessageBytes) and worker.runtime (maxQueueMessageBytes): 131072, or
// 127000 on lane v1beta1.
func (e Edition) queueMessageBytes() int { return pick(e, 131072, 127000) }

// base64Len is the padded base64 length of n bytes: the structural ceiling
// of an encoded-bytes data member whose decoded length is limited to n.
func base64Len(n int) int { return (n + 2) / 3 * 4 }

// astralKeyExample explains that a key limit counts UTF-8 bytes, not code
// points, with a key of limit astral (4-byte) characters.
func astralKeyExample(limit int) string {
	return fmt.Sprintf("a key of %d astral characters is %d bytes and fails with invalid_key although it has only "+
		"%d code points.", limit, 4*limit, limit)
}
