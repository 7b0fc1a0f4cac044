package source

// NodeChannels is what one node's PUBSUB commands say. Pub/Sub state is
// node-local (on a Redis Cluster a classic subscriber is registered only on
// the node it is connected to), so a channel audit reads every node.
type NodeChannels struct {
	Node string // the node's address
	// Primary is set for a node that serves slots (a standalone server,
	// a cluster master); Slots are a cluster master's slot ranges.
	Primary bool
	Slots   [][2]int
	// Classic and Sharded are the active channels (PUBSUB CHANNELS and
	// PUBSUB SHARDCHANNELS) with their subscriber counts (NUMSUB and
	// SHARDNUMSUB).
	Classic []ChannelCount
	Sharded []ChannelCount
	// NumPat is PUBSUB NUMPAT: the patterns subscribed on this node.
	NumPat int64
	// PublishCalls is cmdstat_publish's calls in INFO commandstats: the
	// PUBLISH commands this node ran since its stats were reset. -1 when
	// not read.
	PublishCalls int64
	// BusPublishSent and BusPublishReceived are CLUSTER INFO's
	// cluster_stats_messages_publish_sent and _received: the classic
	// messages copied over the cluster bus. -1 when the server does not
	// report them (standalone, or a refused CLUSTER INFO).
	BusPublishSent, BusPublishReceived int64
	// Server and Version are INFO server's name and version of the node
	// ("redis" and redis_version, or "valkey" and valkey_version), read
	// with the counters; empty when not read. They tell the size of the
	// cluster bus header a PUBLISH costs.
	Server, Version string
	// CountersErr says why a counter is -1 although the node was asked
	// (a refused INFO or CLUSTER INFO); nil otherwise.
	CountersErr error
	// UnreadReplicas is the replicas a standalone or Sentinel primary
	// reports (INFO replication's connected_slaves), which the read did
	// not cover: subscribers connected to them are not counted. 0 on a
	// cluster, whose replicas are nodes of their own.
	UnreadReplicas int
	// Truncated is set when the node had more channels than were read.
	Truncated bool
	// Skipped is set, to the node's flags and link state, for a cluster
	// node that CLUSTER NODES flags as failing (fail, handshake, noaddr,
	// its link not connected): it was not read, and counts as no node.
	Skipped string
	// Err says why the node could not be read (a refusal: the ACL lacks
	// +pubsub); the other fields are then empty.
	Err error
}

// ChannelCount is one active channel and its subscribers on one node.
type ChannelCount struct {
	Name        string
	Subscribers int64
	// Slot is a sharded channel's Redis Cluster hash slot (hash tags
	// honoured); 0 for a classic channel.
	Slot int
}
