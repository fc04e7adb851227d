/// A call sent on the Redis link, in flight: what to do with its answer. Redis thread only.
final class RedisCall {
    /// Monotonic seconds when it was sent; the call fails `limit` seconds later.
    let sentAt: Double
    let limit: Double
    private var completion: ((RedisReply?) -> Void)?

    init(sentAt: Double, limit: Double, completion: ((RedisReply?) -> Void)?) {
        self.sentAt = sentAt
        self.limit = limit
        self.completion = completion
    }

    var isFinished: Bool { completion == nil }

    /// Hands the answer over once; later answers (after a timeout) are dropped.
    func finish(_ reply: RedisReply?) {
        let completion = self.completion
        self.completion = nil
        completion?(reply)
    }
}
