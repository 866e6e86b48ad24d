package bench

// PriceTable is the list prices the cost estimate uses (US East, N.
// Virginia, on demand, USD). Prices change: each carries the date it was
// checked and where.
type PriceTable struct {
	Checked string `json:"checked"`
	// S3 Standard requests, per 1,000. Checked 2026-11-29 against
	// third-party summaries of https://aws.amazon.com/s3/pricing/ (the
	// official page's table is rendered by script and its numbers could
	// not be read directly): PUT/COPY/POST/LIST $0.005, GET/SELECT
	// $0.0004 per 1,000 requests.
	S3StandardPutPer1000 float64 `json:"s3_standard_put_per_1000"`
	S3StandardGetPer1000 float64 `json:"s3_standard_get_per_1000"`
	// S3 Express One Zone, from the worked example in the official S3 FAQ
	// (https://aws.amazon.com/s3/faqs/, prices after the April 2025
	// reduction): PUT $0.00113 and GET $0.00003 per 1,000 requests, plus
	// $0.0032 per GB uploaded and $0.0006 per GB retrieved.
	S3ExpressPutPer1000    float64 `json:"s3_express_put_per_1000"`
	S3ExpressGetPer1000    float64 `json:"s3_express_get_per_1000"`
	S3ExpressUploadPerGB   float64 `json:"s3_express_upload_per_gb"`
	S3ExpressRetrievePerGB float64 `json:"s3_express_retrieve_per_gb"`
	// Data transfer between availability zones of one region: $0.01 per
	// GB out of one zone and $0.01 per GB into the other. Checked against
	// third-party write-ups of https://aws.amazon.com/ec2/pricing/on-demand/
	// (not read from the official page itself).
	InterAZPerGBEachWay float64  `json:"inter_az_per_gb_each_way"`
	Sources             []string `json:"sources"`
}

// Prices is the table in force.
var Prices = PriceTable{
	Checked:                "2026-11-29",
	S3StandardPutPer1000:   0.005,
	S3StandardGetPer1000:   0.0004,
	S3ExpressPutPer1000:    0.00113,
	S3ExpressGetPer1000:    0.00003,
	S3ExpressUploadPerGB:   0.0032,
	S3ExpressRetrievePerGB: 0.0006,
	InterAZPerGBEachWay:    0.01,
	Sources: []string{
		"https://aws.amazon.com/s3/pricing/ (S3 Standard requests; figures confirmed from third-party summaries, not the page itself)",
		"https://aws.amazon.com/s3/faqs/ (S3 Express One Zone worked example)",
		"https://aws.amazon.com/ec2/pricing/on-demand/ (data transfer between AZs; confirmed from third-party write-ups)",
	},
}

// secondsPerMonth is AWS's billing month of 730 hours.
const secondsPerMonth = 730 * 3600

// CostEstimate is the monthly cost of sustaining 1 GB/s of produce with
// the request counts this run measured, next to a 3-replica disk
// cluster's cross-zone traffic for the same load. Storage is left out:
// both designs keep the same bytes.
type CostEstimate struct {
	PutsPerGB   float64 `json:"object_puts_per_gb"`
	GetsPerGB   float64 `json:"object_gets_per_gb_read"`
	ReadsPerGB  float64 `json:"gb_read_per_gb_written"` // consumer fan-out measured
	S3Standard  float64 `json:"s3_standard_usd_per_month_per_gbps"`
	S3Express   float64 `json:"s3_express_usd_per_month_per_gbps"`
	DiskReplica float64 `json:"disk_3_replica_usd_per_month_per_gbps"`
	// DiskWithClients adds the clients' traffic to partition leaders in
	// other zones (2/3 of produce and of consume, no follower fetching).
	DiskWithClients float64 `json:"disk_3_replica_with_clients_usd_per_month_per_gbps"`
}

// estimateCost prices the broker's measured request counts; nil when the
// broker made no object-store requests (it keeps no data in a bucket).
func estimateCost(b *BrokerFigure, produced, consumed int64, prod, cons Rate) *CostEstimate {
	if b == nil || b.Puts == 0 || prod.Bytes == 0 {
		return nil
	}
	fanout := 0.0
	if produced > 0 {
		fanout = float64(consumed) / float64(produced)
	}
	gbPerMonth := float64(secondsPerMonth) // 1 GB/s for a month
	p := Prices
	c := &CostEstimate{PutsPerGB: b.PutsPerGB, GetsPerGB: b.GetsPerGB, ReadsPerGB: fanout}
	puts := b.PutsPerGB * gbPerMonth
	gets := b.GetsPerGB * fanout * gbPerMonth
	c.S3Standard = puts*p.S3StandardPutPer1000/1000 + gets*p.S3StandardGetPer1000/1000
	outPerGB, inPerGB := 0.0, 0.0
	if prodBytes := float64(totalBytes(prod, produced)); prodBytes > 0 {
		outPerGB = b.ObjectBytesOut / prodBytes
	}
	if cons.Bytes > 0 {
		inPerGB = b.ObjectBytesIn / float64(cons.Bytes)
	}
	c.S3Express = puts*p.S3ExpressPutPer1000/1000 + gets*p.S3ExpressGetPer1000/1000 +
		outPerGB*gbPerMonth*p.S3ExpressUploadPerGB + inPerGB*fanout*gbPerMonth*p.S3ExpressRetrievePerGB
	crossAZ := 2 * p.InterAZPerGBEachWay     // out of one zone, into another
	c.DiskReplica = 2 * crossAZ * gbPerMonth // the leader sends each byte to two followers in other zones
	c.DiskWithClients = c.DiskReplica + (2.0/3)*crossAZ*gbPerMonth*(1+fanout)
	return c
}
