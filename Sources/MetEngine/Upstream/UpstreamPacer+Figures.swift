extension UpstreamPacer {
    /// What `/health` and `/metrics` show of the pacer.
    public struct Figures: Sendable, Equatable {
        /// Calls per second that may start, on average.
        public var ratePerSecond: Double
        /// Calls that may start at once after a quiet spell.
        public var burst: Int
        /// The most calls in flight at once.
        public var concurrency: Int
        /// Calls in flight now.
        public var inFlight: Int
        /// Calls waiting for their turn, a token or a slot now.
        public var waiting: Int
        /// Of those, the calls some request waits for (the rest only refresh or fill the cache).
        public var waitingInForeground: Int = 0
        /// Clients with at least one call waiting.
        public var clientsWaiting: Int = 0
        /// The most calls one client may have waiting.
        public var clientLimit: Int = .max
        /// Calls refused since start-up because every client that needed them had `clientLimit`
        /// calls waiting.
        public var refused: Int = 0

        /// Calls waiting that no request waits for.
        public var waitingInBackground: Int { waiting - waitingInForeground }
    }
}
