/// A defined moment of the app's life at which modules run work (Ghost's phases). The host triggers phases;
/// the kernel runs each active module's participants in dependency order.
public struct LifecyclePhase: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let name: String

    public init(_ name: String) { self.name = name }
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

    public var description: String { name }
}

/// Something that happened to the host (Ghost's app and scene delegate callbacks, in a form any host can send).
/// Modules listen only to the kinds they care about.
public struct HostEvent: Sendable, Hashable, CustomStringConvertible {
    /// What happened.
    public struct Kind: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
        public let name: String

        public init(_ name: String) { self.name = name }
        public init(stringLiteral name: String) { self.name = name }

        public static let launched: Self = "launched"
        public static let becameActive: Self = "becameActive"
        public static let willResignActive: Self = "willResignActive"
        public static let enteredBackground: Self = "enteredBackground"
        public static let willTerminate: Self = "willTerminate"
        /// The host was asked to open a URL; ``HostEvent/url`` holds it.
        public static let openedURL: Self = "openedURL"

        public var description: String { name }
    }

    public let kind: Kind
    /// The URL, for ``Kind-swift.struct/openedURL``.
    public let url: String?
    /// Whatever else the host says about the event.
    public let attributes: [String: String]

    public init(_ kind: Kind, url: String? = nil, attributes: [String: String] = [:]) {
        self.kind = kind
        self.url = url
        self.attributes = attributes
    }

    public var description: String { url.map { "\(kind) \($0)" } ?? kind.name }
}
