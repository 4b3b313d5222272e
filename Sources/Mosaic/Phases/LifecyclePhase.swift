/// A defined moment of the app's life at which modules run work (Ghost's phases). The host triggers phases;
/// the kernel runs each active module's participants in dependency order.
public struct LifecyclePhase: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name, as hosts and messages show it.
    public let name: String

    /// The phase named `name`.
    public init(_ name: String) { self.name = name }
    /// The phase named by a string literal.
    public init(stringLiteral name: String) { self.name = name }

    /// Before anything shows: warm caches.
    public static let prewarm: Self = "prewarm"
    /// The app launched.
    public static let launch: Self = "launch"
    /// A scene (a window, a browser session) connected.
    public static let sceneConnect: Self = "sceneConnect"
    /// The first UI is on screen: deferred work may start.
    public static let postUI: Self = "postUI"
    /// Periodic background work; a host may trigger it again and again.
    public static let backgroundRefresh: Self = "backgroundRefresh"

    /// The value as text, for messages and logs.
    public var description: String { name }
}

/// Something that happened to the host (Ghost's app and scene delegate callbacks, in a form any host can send).
/// Modules listen only to the kinds they care about.
public struct HostEvent: Sendable, Hashable, CustomStringConvertible {
    /// What happened.
    public struct Kind: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The name, as hosts and messages show it.
        public let name: String

        /// The kind named `name`.
        public init(_ name: String) { self.name = name }
        /// The kind named by a string literal.
        public init(stringLiteral name: String) { self.name = name }

        /// The app finished launching.
        public static let launched: Self = "launched"
        /// The app became active.
        public static let becameActive: Self = "becameActive"
        /// The app is about to become inactive.
        public static let willResignActive: Self = "willResignActive"
        /// The app entered the background.
        public static let enteredBackground: Self = "enteredBackground"
        /// The app is about to terminate.
        public static let willTerminate: Self = "willTerminate"
        /// The host was asked to open a URL; ``HostEvent/url`` holds it.
        public static let openedURL: Self = "openedURL"

        /// The value as text, for messages and logs.
        public var description: String { name }
    }

    /// What happened.
    public let kind: Kind
    /// The URL, for ``Kind-swift.struct/openedURL``.
    public let url: String?
    /// Whatever else the host says about the event.
    public let attributes: [String: String]

    /// An event of `kind`, with the URL it carries (for `openedURL`) and anything else the host adds.
    public init(_ kind: Kind, url: String? = nil, attributes: [String: String] = [:]) {
        self.kind = kind
        self.url = url
        self.attributes = attributes
    }

    /// The value as text, for messages and logs.
    public var description: String { url.map { "\(kind) \($0)" } ?? kind.name }
}
