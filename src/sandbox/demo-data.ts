// The demo install: two users with fixed keys, and their websites in creation order (ids are one
// global sequence, so user 2's ids sit between user 1's and can be probed). Dates are relative to
// "today". A website's statistics start on the day it was created: those created fewer than 1100
// days ago (the stats window) have none before.
import type { TrafficProfile } from './demo-traffic.js';

export interface DemoUser {
  id: number;
  key: string;
}

export const DEMO_USERS: readonly DemoUser[] = [
  { id: 1, key: 'sandbox-key-1' },
  { id: 2, key: 'sandbox-key-2' },
];

/** The most tenant keys a sandbox makes (`tenantKeys`; each costs a map entry). */
export const MAX_TENANT_KEYS = 100_000;

/** The `n`th tenant key (from 1): user 1's, when the sandbox was started with at least `n` tenant keys. */
export const tenantKey = (n: number): string => `sandbox-tenant-${n}`;

export interface DemoWebsite {
  userId: number;
  domain: string;
  privacy: 0 | 1 | 2;
  password: string | null;
  email: 0 | 1;
  excludeBots: 0 | 1;
  excludeParams: string | null;
  excludeIps: string | null;
  favorite: 0 | 1;
  createdDaysAgo: number;
  /** Seconds after midnight UTC, so timestamps look hand-made rather than all at 00:00. */
  createdAtSecond: number;
  updatedDaysAgo: number;
  traffic: TrafficProfile;
}

const MARKETING_PAGES = [
  '/',
  '/pricing',
  '/pricing?plan=pro',
  '/pricing?plan=team',
  '/features',
  '/about',
  '/contact',
  '/signup',
  '/login',
  '/blog',
  '/changelog',
  '/careers',
  '/security',
  '/privacy',
  '/terms',
  '/integrations',
  '/integrations/slack',
  '/integrations/github',
  '/customers',
  '/docs',
  '/docs/getting-started',
  '/docs/api',
  '/docs/api/authentication',
  '/status',
];
const BLOG_SLUGS = [
  'why-we-built-this',
  'launch-week-recap',
  'pricing-update',
  'scaling-postgres',
  'remote-team-rituals',
  'year-in-review',
  'privacy-first-analytics',
  'a-faster-dashboard',
  'customer-story-harbor',
  'open-source-friday',
  'hiring-engineers',
  'roadmap-q2',
  'dark-mode',
  'keyboard-shortcuts',
];
const SHOP_PAGES = [
  '/',
  '/cart',
  '/checkout',
  '/checkout/success',
  '/search?q=shoes',
  '/search?q=jacket',
  '/account',
  '/collections/new',
  '/collections/sale',
  '/collections/winter',
  '/collections/accessories',
  '/products/trail-runner',
  '/products/city-sneaker',
  '/products/rain-jacket',
  '/products/wool-beanie',
  '/products/canvas-tote',
  '/products/hiking-boot',
  '/products/linen-shirt',
  '/products/denim-jacket',
  '/products/leather-belt',
  '/products/sun-hat',
  '/shipping',
  '/returns',
  '/contact',
  '/about',
];

const blog = (count: number): string[] => ['/blog', ...BLOG_SLUGS.slice(0, count).map((slug) => `/blog/${slug}`)];

const SAAS_EVENTS = ['signup::', 'trial_started::', 'purchase:49:USD', 'purchase:199:USD', 'newsletter:footer:'];
const SHOP_EVENTS = ['add_to_cart::', 'checkout_started::', 'purchase:89:EUR', 'newsletter:popup:'];
const CONTENT_EVENTS = ['newsletter:sidebar:', 'share:twitter:', 'video_play:30:seconds'];

const profile = (
  visitors: number,
  pages: readonly string[],
  events: readonly string[],
  campaigns: readonly string[],
  rhythm: { pagesPerVisit?: number; weekendFactor?: number; trend?: number } = {},
): TrafficProfile => ({
  visitors,
  pages,
  events,
  campaigns,
  pagesPerVisit: rhythm.pagesPerVisit ?? 2.6,
  weekendFactor: rhythm.weekendFactor ?? 0.62,
  trend: rhythm.trend ?? 0.2,
});

const site = (
  userId: number,
  domain: string,
  createdDaysAgo: number,
  traffic: TrafficProfile,
  settings: Partial<Omit<DemoWebsite, 'userId' | 'domain' | 'createdDaysAgo' | 'traffic'>> = {},
): DemoWebsite => ({
  userId,
  domain,
  privacy: 0,
  password: null,
  email: 0,
  excludeBots: 1,
  excludeParams: null,
  excludeIps: null,
  favorite: 0,
  createdAtSecond: 36_000 + ((createdDaysAgo * 7919) % 28_800),
  updatedDaysAgo: Math.max(0, createdDaysAgo - 30),
  createdDaysAgo,
  traffic,
  ...settings,
});

export const DEMO_WEBSITES: readonly DemoWebsite[] = [
  site(
    1,
    'acme-analytics.com',
    1200,
    profile(1800, [...MARKETING_PAGES, ...blog(8).slice(1)], SAAS_EVENTS, ['spring_launch', 'newsletter_march', 'retargeting_q1']),
    { favorite: 1, email: 1, excludeParams: 'utm_source\nutm_medium\nfbclid' },
  ),
  site(
    1,
    'blog.acme-analytics.com',
    1160,
    profile(
      650,
      [...blog(14), '/', '/about', '/rss.xml', '/tags/engineering', '/tags/product', '/tags/company'],
      CONTENT_EVENTS,
      ['newsletter_weekly'],
      { pagesPerVisit: 1.6, weekendFactor: 0.85, trend: 0.35 },
    ),
  ),
  site(
    2,
    'pixelforge.io',
    1135,
    profile(
      420,
      [...MARKETING_PAGES.slice(0, 16), '/gallery', '/gallery/portraits', '/gallery/landscapes', '/editor', '/templates'],
      SAAS_EVENTS.slice(0, 3),
      ['holiday_promo'],
      { weekendFactor: 0.9 },
    ),
    { privacy: 1, favorite: 1 },
  ),
  site(
    1,
    'docs.acme-analytics.com',
    1120,
    profile(
      300,
      [
        ...MARKETING_PAGES.filter((page) => page.startsWith('/docs')),
        '/docs/sdk/js',
        '/docs/sdk/python',
        '/docs/sdk/go',
        '/docs/webhooks',
        '/docs/self-hosting',
        '/docs/faq',
        '/docs/api/websites',
        '/docs/api/stats',
        '/docs/api/errors',
        '/docs/migrating',
        '/search?q=api+key',
        '/search?q=webhook',
      ],
      ['copy_snippet:js:', 'copy_snippet:python:', 'feedback:helpful:'],
      [],
      { pagesPerVisit: 4.2, weekendFactor: 0.35 },
    ),
    { privacy: 2, password: 'docs-preview', excludeIps: '10.0.0.1\n10.0.0.2' },
  ),
  site(
    1,
    'northwind-outfitters.com',
    1105,
    profile(950, SHOP_PAGES, SHOP_EVENTS, ['winter_sale', 'black_friday', 'newsletter_january', 'influencer_spring'], {
      pagesPerVisit: 3.4,
      weekendFactor: 1.25,
      trend: -0.1,
    }),
    { favorite: 1, email: 1, excludeIps: '203.0.113.7\n198.51.100.23' },
  ),
  site(
    2,
    'harborlight.org',
    380,
    profile(
      120,
      [
        '/',
        '/about',
        '/donate',
        '/donate?amount=25',
        '/events',
        '/events/spring-gala',
        '/volunteer',
        '/news',
        '/news/annual-report',
        '/contact',
        '/team',
        '/partners',
      ],
      ['donation:25:USD', 'donation:100:USD', 'volunteer_signup::'],
      ['spring_gala'],
      { pagesPerVisit: 2.1, weekendFactor: 1.1 },
    ),
    { email: 1 },
  ),
  site(
    1,
    'tailspin-travel.com',
    350,
    profile(
      2400,
      [
        '/',
        '/destinations',
        '/destinations/lisbon',
        '/destinations/kyoto',
        '/destinations/reykjavik',
        '/destinations/cape-town',
        '/destinations/lima',
        '/destinations/hanoi',
        '/deals',
        '/deals?month=june',
        '/deals?month=july',
        '/search?from=LHR&to=JFK',
        '/search?from=CDG&to=NRT',
        '/booking',
        '/booking/confirm',
        '/account/trips',
        '/help',
        '/help/baggage',
        '/help/refunds',
        '/about',
        '/careers',
        '/blog',
        '/blog/packing-light',
        '/blog/hidden-beaches',
        '/blog/city-breaks',
      ],
      ['booking:620:EUR', 'booking:1480:EUR', 'newsletter:footer:', 'search::'],
      ['summer_deals', 'last_minute', 'loyalty_boost'],
      { pagesPerVisit: 3.1, weekendFactor: 1.15, trend: 0.45 },
    ),
  ),
  site(
    1,
    'status.acme-analytics.com',
    300,
    profile(
      60,
      ['/', '/incidents', '/incidents/2026-01-api-latency', '/incidents/2025-12-dns', '/history', '/subscribe', '/rss'],
      ['subscribe:email:'],
      [],
      { pagesPerVisit: 1.4, weekendFactor: 0.5, trend: 0 },
    ),
    { privacy: 1, excludeBots: 0 },
  ),
  site(
    2,
    'greenleaf-recipes.com',
    260,
    profile(
      780,
      [
        '/',
        '/recipes',
        '/recipes/lemon-risotto',
        '/recipes/miso-ramen',
        '/recipes/sourdough',
        '/recipes/shakshuka',
        '/recipes/banana-bread',
        '/recipes/pad-thai',
        '/recipes/falafel',
        '/recipes/tiramisu',
        '/recipes?diet=vegan',
        '/recipes?diet=gluten-free',
        '/meal-plans',
        '/about',
        '/newsletter',
        '/search?q=pasta',
        '/search?q=soup',
      ],
      CONTENT_EVENTS,
      ['autumn_recipes'],
      { pagesPerVisit: 2.2, weekendFactor: 1.4 },
    ),
    { favorite: 1, excludeParams: 'ref' },
  ),
  site(
    1,
    '198.51.100.42',
    150,
    profile(25, ['/', '/health', '/login', '/admin', '/admin/reports'], [], [], { pagesPerVisit: 1.8, weekendFactor: 0.3, trend: 0 }),
    { privacy: 1, email: 0, excludeBots: 0 },
  ),
];
